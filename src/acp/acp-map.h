/* SPDX-License-Identifier: MIT */
/*
 * acp-map: baton's normalized events (event.h) as the `update` objects of
 * ACP `session/update` notifications, for `baton acp` (docs/acp-agent.md).
 * The same mapping serves a live turn and a stored one replayed by
 * session/load, so an editor sees a loaded conversation as it saw it live.
 *
 * Shapes: the SessionUpdate variants of the ACP JSON schema shipped in
 * @agentclientprotocol/sdk 2.4.0 (schema/v1/schema.json): ContentChunk,
 * ToolCall, ToolCallUpdate, Plan, UsageUpdate; and
 * https://agentclientprotocol.com/protocol/v1/prompt-turn, tool-calls.
 */
#ifndef BT_ACP_MAP_H
#define BT_ACP_MAP_H

#include <cjson/cJSON.h>

#include "event.h"

/* What one turn has sent so far: which items the editor has heard of and
 * how much of each message's text. Zero it (or bt_acp_map_init) before a
 * turn; bt_acp_map_release after. */
struct bt_acp_map {
    struct bt_acp_map_item *items; /* owned */
    size_t n, cap;
    char *cwd; /* the turn's directory (turn.started): where relative paths are */
};

void bt_acp_map_init(struct bt_acp_map *m);
void bt_acp_map_release(struct bt_acp_map *m);

/* Append to updates (a cJSON array) the update objects ev becomes, in
 * order; often none (turn.*, warnings, approvals other than questions:
 * the prompt's response and session/request_permission carry those), at
 * most two.
 *   message, reasoning: agent_message_chunk / agent_thought_chunk, one per
 *     delta; an item.completed sends the text its deltas did not (all of
 *     it for a coder that does not stream).
 *   command, file_change, tool_call, web_search, other: tool_call at
 *     item.started (status in_progress) with the ACP tool kind (execute,
 *     edit, other, search, other) and a title (the command line, the
 *     file(s), the tool's name or query); tool_call_update at
 *     item.completed with status completed or failed (declined, failed)
 *     and the output as text content; one tool_call with it all when no
 *     item.started came. A file change's changes (item.changes, at its
 *     start or end) become diff content and locations, sent again with
 *     the output (ACP's content replaces what was there). Output deltas are not sent: ACP's content
 *     replaces what was there, and item.completed has it whole.
 *   plan: plan, one entry per line of its text ("[status] step" lines
 *     keep their status).
 *   approval.requested of kind user_input (a question nobody can answer
 *     during the turn): one tool_call "question-RUN-SEQ", kind other,
 *     status failed, titled "Question: " and the summary, its questions
 *     and options as text content.
 *   usage with context_tokens and context_window known: usage_update
 *     {used, size}; no cost: ACP's is the session's total, cost_usd
 *     the turn's (docs/events.md).
 *   turn.steered (a steer from the CLI, the API or the page): a
 *     user_message_chunk with its text, where it went into the turn.
 * Returns the number of updates appended. */
int bt_acp_map_event(struct bt_acp_map *m, const struct bt_event *ev, cJSON *updates);

/* acp-diff.c: append to content (a ToolCallContent array) a Diff for each
 * change of changes_json (event.h, item.changes: a JSON array; NULL or
 * not an array: none), one per hunk of a unified diff, and each file's
 * absolute path (relative ones against cwd, when given) to locations (a
 * ToolCallLocation array). Returns the number of content entries added. */
int bt_acp_diff_add(cJSON *content, cJSON *locations, const char *changes_json, const char *cwd);
/* acp-diff.c: the tool_call of what turn (run its last run) changed, d
 * made with BT_SERVICE_DIFF_PATCH, FILES and TOP (service-work.h): id
 * "changes-RUN", kind edit, status completed, titled "Changes of turn N:"
 * and the files; a Diff per hunk of each file (paths absolute against
 * d->top) and the files as locations. NULL when nothing changed. */
struct bt_service_diff;
cJSON *bt_acp_diff_turn(const char *run, int64_t turn, const struct bt_service_diff *d);
/* What turn (run its last run) of conversation conv changed in its
 * working tree, from its snapshots (service-work.h), as the tool call
 * session/update sends (acp-map.h, bt_acp_diff_turn); NULL when nothing
 * changed or nothing was recorded (not in git, snapshots off). Live, at
 * the turn's end before its prompts are answered; replayed by
 * session/load after the turn's events. */
struct bt_store;
cJSON *bt_acp_changes(struct bt_store *s, const char *conv, const char *run, int64_t turn);
/* A tool call's title from changes_json: the first path as the coder
 * gave it, "and N more files" after it; NULL when there is none (owned). */
char *bt_acp_diff_title(const char *changes_json);

/* ACP's ToolKind of one of baton's item or approval kinds (event.h,
 * docs/events.md): command "execute", file_change "edit", web_search
 * "search", any other (or NULL) "other". */
const char *bt_acp_tool_kind(const char *kind);

/* The update of a user's prompt text (user_message_chunk), as
 * session/load replays it. */
cJSON *bt_acp_map_user_text(const char *text);

/* ACP's StopReason for a turn that ended so: completed "end_turn",
 * cancelled or interrupted "cancelled"; NULL for failed (the prompt's
 * response is then a JSON-RPC error). */
const char *bt_acp_stop_reason(enum bt_turn_status status);

#endif
