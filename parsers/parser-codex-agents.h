/* SPDX-License-Identifier: MIT */
/*
 * codex parser, sub-agents: the threads codex runs beside the conversation's
 * own on the same connection (codex-cli 0.171.0, docs/codex.md "Sub-agent
 * threads"). A sub-agent that the model spawns (`collabAgentToolCall`,
 * tool `spawnAgent`) is a thread of its own whose notifications
 * (`thread/started` with `parentThreadId`, `turn/started`, items with
 * their `threadId`, `thread/tokenUsage/updated`, `turn/completed`) reach
 * every connection attached to the parent. None of it is the turn's: the
 * parser shows each sub-agent's turn as one item of kind `subagent` (id:
 * its thread id; name: its nickname, role or path; status; text: its last
 * message) and tags the sub-agent's own items with item.subagent.
 *
 * Internal to parser-codex.c; strings are borrowed for the call.
 */
#ifndef BT_PARSER_CODEX_AGENTS_H
#define BT_PARSER_CODEX_AGENTS_H

#include <stddef.h>

#include "parser.h"

struct cJSON;

/* The sub-agents seen in one parser's life; bounded (BT_CODEX_MAX_AGENTS:
 * past it a new sub-agent's item is still shown, without its name or
 * last message). */
struct bt_codex_agents;

struct bt_codex_agents *bt_codex_agents_new(void);
void bt_codex_agents_free(struct bt_codex_agents *a);

/* The sub-agent thread a notification is about: its `threadId`
 * (thread/started: its thread's id) when that is not own, the
 * conversation's thread (from the thread/start or thread/resume answer);
 * NULL for the own thread, while own is not known (NULL), and for a
 * notification that names no thread. Points into params. */
const char *bt_codex_agents_thread_of(const char *own, const struct cJSON *params);

/* A notification of the sub-agent thread `thread` that is not about its
 * items (those are the parser's, tagged with the thread):
 * - thread/started: its name is remembered (`agentNickname`, `agentRole`,
 *   else the thread_spawn `agent_nickname` or `agent_path` of its source);
 * - turn/started: item.started of kind subagent (id and subagent: thread);
 * - turn/completed: item.completed of kind subagent, status completed for
 *   turn.status completed, else failed (interrupted, failed or unknown:
 *   detail.status says which), text its last message, detail {thread,
 *   status, error};
 * - error: a `coder` warning naming the sub-agent (not the turn's error);
 * - thread/tokenUsage/updated: nothing (not the turn's usage).
 * Returns 1 when it was one of these, 0 for the parser to handle. */
int bt_codex_agents_note(struct bt_codex_agents *a, const char *thread, const char *method,
                         const struct cJSON *params, const struct bt_parser_sink *sink);

/* A sub-agent's agentMessage completed: its text is the sub-agent's latest
 * word, the text of its item when its turn completes. */
void bt_codex_agents_message(struct bt_codex_agents *a, const char *thread, const char *text);

#endif
