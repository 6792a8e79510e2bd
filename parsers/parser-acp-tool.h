/* SPDX-License-Identifier: MIT */
/*
 * parser-acp-tool: the tool calls of an ACP agent, read from their JSON
 * (ToolCall, ToolCallUpdate, ToolCallContent of the ACP schema,
 * @agentclientprotocol/sdk 2.4.0). Internal to the ACP parser.
 */
#ifndef BT_PARSER_ACP_TOOL_H
#define BT_PARSER_ACP_TOOL_H

#include <cjson/cJSON.h>

#include "event.h"
#include "util.h"

/* A tool call the parser remembers for its updates, which name only the
 * id. Strings are owned. */
struct acp_tool {
    char *id;
    enum bt_item_kind kind;
    char *title;   /* the tool call's title: a command line, a path */
    char *command; /* execute: rawInput.command when a string, else title */
};

/* ToolKind -> item kind (NULL or unknown: a tool call). */
enum bt_item_kind bt_acp_tool_item_kind(const char *kind);
/* ToolCallStatus -> item status ("in_progress", "completed", "failed");
 * *final is set when the status ends the call. */
const char *bt_acp_tool_item_status(const char *status, int *final);
/* Keep what a tool call or update u says of the tool in t. */
void bt_acp_tool_learn(struct acp_tool *t, const cJSON *u);
/* The text of content's "content" entries, joined by newlines, into out. */
void bt_acp_content_text(const cJSON *content, struct bt_buf *out);
/* The members of u kept as an item's detail_json (NULL: none; cJSON_free). */
char *bt_acp_tool_detail(const cJSON *u);
/* content's diff entries as an item's changes_json (NULL: none; cJSON_free). */
char *bt_acp_tool_changes(const cJSON *content);

#endif
