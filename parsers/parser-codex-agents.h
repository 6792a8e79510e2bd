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

/* thread/started of a sub-agent thread: remember its name (`agentNickname`,
 * `agentRole`, else the thread_spawn `agent_path` of its source). */
void bt_codex_agents_thread(struct bt_codex_agents *a, const char *thread,
                            const struct cJSON *thread_obj);

/* A sub-agent's turn/started: item.started of kind subagent. */
void bt_codex_agents_turn_started(struct bt_codex_agents *a, const char *thread,
                                  const struct bt_parser_sink *sink);

/* A sub-agent's turn/completed: item.completed of kind subagent, status
 * completed for turn.status completed, else failed (interrupted, failed or
 * unknown: detail.status says which), text its last message, detail
 * {thread, status, error}. */
void bt_codex_agents_turn_completed(struct bt_codex_agents *a, const char *thread,
                                    const struct cJSON *turn, const struct bt_parser_sink *sink);

/* A sub-agent's agentMessage completed: its text is the sub-agent's latest
 * word, the text of its item when its turn completes. */
void bt_codex_agents_message(struct bt_codex_agents *a, const char *thread, const char *text);

#endif
