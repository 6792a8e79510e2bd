/* SPDX-License-Identifier: MIT */
/*
 * parser-acp-tool: what an ACP agent's tool calls say, read from their
 * JSON (the ToolCall and ToolCallUpdate of the ACP schema,
 * @agentclientprotocol/sdk 2.4.0): kind, status, content text, diffs.
 * The routing and the events are parser-acp.c's.
 */
#include "parser-acp-tool.h"

#include <string.h>

#include "json.h"
#include "parser.h"

/* ToolKind -> item kind: execute a command; edit, delete, move a file
 * change; fetch, search a web search; read, think, switch_mode, other and
 * an unknown kind a tool call. */
enum bt_item_kind bt_acp_tool_item_kind(const char *k)
{
    static const struct {
        const char *name;
        enum bt_item_kind kind;
    } map[] = {
        {"execute", BT_ITEM_COMMAND},    {"edit", BT_ITEM_FILE_CHANGE},
        {"delete", BT_ITEM_FILE_CHANGE}, {"move", BT_ITEM_FILE_CHANGE},
        {"fetch", BT_ITEM_WEB_SEARCH},   {"search", BT_ITEM_WEB_SEARCH},
    };
    for (size_t i = 0; k && i < BT_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].name, k) == 0)
            return map[i].kind;
    return BT_ITEM_TOOL_CALL;
}

/* ToolCallStatus -> item status: pending and in_progress are under way;
 * an unknown status is never success. */
const char *bt_acp_tool_item_status(const char *s, int *final)
{
    *final = 0;
    if (!s || strcmp(s, "pending") == 0 || strcmp(s, "in_progress") == 0)
        return "in_progress";
    *final = 1;
    return strcmp(s, "completed") == 0 ? "completed" : "failed";
}

/* What a tool call or its update says about the tool, kept for later
 * updates (which send only what changed). */
void bt_acp_tool_learn(struct acp_tool *t, const cJSON *u)
{
    const char *kind = bt_json_str(u, "kind");
    const char *title = bt_json_str(u, "title");
    const cJSON *input = bt_json_obj(u, "rawInput");
    const char *cmd = input ? bt_json_str(input, "command") : NULL;
    if (kind)
        t->kind = bt_acp_tool_item_kind(kind);
    if (title)
        bt_json_set_str(&t->title, title);
    if (cmd)
        bt_json_set_str(&t->command, cmd);
}

/* The text blocks of a tool call's content (ToolCallContent "content"
 * entries), joined by newlines: a command's output, a tool's result. */
void bt_acp_content_text(const cJSON *content, struct bt_buf *out)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, content)
    {
        const char *type = bt_json_str(c, "type");
        const cJSON *block = bt_json_obj(c, "content");
        const char *text = block ? bt_json_str(block, "text") : NULL;
        if (!type || strcmp(type, "content") != 0 || !text)
            continue;
        if (out->len)
            bt_buf_addc(out, '\n');
        bt_buf_adds(out, text);
    }
}

/* The members kept verbatim as an item's detail: diffs, locations, the
 * tool's raw input and output. */
char *bt_acp_tool_detail(const cJSON *u)
{
    static const char *const keys[] = {"content", "locations", "rawInput", "rawOutput"};
    return bt_parser_detail(u, keys, BT_ARRAY_SIZE(keys));
}

/* The diff entries of a tool call's content, normalized: ToolCallContent
 * {type: "diff", path, oldText (null or absent for a new file), newText}
 * (ACP schema, @agentclientprotocol/sdk 2.4.0). */
char *bt_acp_tool_changes(const cJSON *content)
{
    cJSON *changes = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, content)
    {
        const char *type = bt_json_str(c, "type");
        if (!type || strcmp(type, "diff") != 0)
            continue;
        const char *old = bt_json_str(c, "oldText");
        bt_parser_change(&changes, bt_json_str(c, "path"), old ? "update" : "add", NULL, NULL, old,
                         bt_json_str(c, "newText"));
    }
    return bt_parser_changes_text(changes);
}
