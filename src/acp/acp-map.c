/* SPDX-License-Identifier: MIT */
/* acp-map: normalized events as ACP session/update objects (acp-map.h). */
#include "acp-map.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util.h"

/* One item the editor has heard of. */
struct bt_acp_map_item {
    char *id;
    size_t sent;   /* message, reasoning: bytes of text sent */
    uint64_t hash; /* ... and their FNV-1a hash, to tell a completion that repairs them */
    int announced; /* a tool: its tool_call went out */
    char *changes; /* a file change: its changes, from the event that had them */
};

void bt_acp_map_init(struct bt_acp_map *m)
{
    memset(m, 0, sizeof(*m));
}

void bt_acp_map_release(struct bt_acp_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].id);
        free(m->items[i].changes);
    }
    free(m->items);
    free(m->cwd);
    bt_acp_map_init(m);
}

static struct bt_acp_map_item *item_of(struct bt_acp_map *m, const char *id)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->items[i].id, id) == 0)
            return &m->items[i];
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->items = bt_xrealloc(m->items, m->cap * sizeof(*m->items));
    }
    struct bt_acp_map_item *it = &m->items[m->n++];
    *it = (struct bt_acp_map_item){.id = bt_xstrdup(id)};
    return it;
}

/* A text ContentBlock, {"type": "text", "text": text}; text need not end
 * in NUL (a NUL inside ends it: JSON text from cJSON cannot hold one). */
static cJSON *text_block(const char *text, size_t len)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", "text");
    char *t = bt_xstrndup(text ? text : "", len);
    cJSON_AddStringToObject(c, "text", t);
    free(t);
    return c;
}

/* {"sessionUpdate": kind, "content": text block} */
static cJSON *chunk(const char *kind, const char *text, size_t len)
{
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", kind);
    cJSON_AddItemToObject(u, "content", text_block(text, len));
    return u;
}

cJSON *bt_acp_map_user_text(const char *text)
{
    return chunk("user_message_chunk", text, text ? strlen(text) : 0);
}

#define FNV_OFFSET 14695981039346656037u
#define FNV_PRIME 1099511628211u

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

/* message and reasoning: what of the text has not been sent yet. A
 * complete text that does not begin with what was streamed (a delta was
 * lost or cut; docs/events.md, `repaired`) cannot be patched, as ACP
 * chunks only append: it follows whole, after a blank line, so the
 * editor's transcript ends with the right text. */
static int on_text(struct bt_acp_map *m, const struct bt_event *ev, cJSON *updates)
{
    const char *kind =
        ev->item.kind == BT_ITEM_MESSAGE ? "agent_message_chunk" : "agent_thought_chunk";
    struct bt_acp_map_item *it = item_of(m, ev->item.id);
    if (!it->sent)
        it->hash = FNV_OFFSET;
    const char *text = NULL;
    size_t len = 0;
    if (ev->type == BT_EVENT_ITEM_DELTA) {
        text = ev->delta;
        len = ev->delta_len;
    } else if (ev->type == BT_EVENT_ITEM_COMPLETED && ev->item.text && it->sent &&
               (ev->item.text_len < it->sent ||
                fnv(FNV_OFFSET, ev->item.text, it->sent) != it->hash)) {
        struct bt_buf whole = BT_BUF_INIT;
        bt_buf_adds(&whole, "\n\n");
        bt_buf_add(&whole, ev->item.text, ev->item.text_len);
        cJSON_AddItemToArray(updates, chunk(kind, whole.data, whole.len));
        bt_buf_release(&whole);
        return 1;
    } else if (ev->type == BT_EVENT_ITEM_COMPLETED && ev->item.text &&
               ev->item.text_len > it->sent) {
        text = ev->item.text + it->sent;
        len = ev->item.text_len - it->sent;
    }
    if (!text || !len)
        return 0;
    it->hash = fnv(it->hash, text, len);
    it->sent += len;
    cJSON_AddItemToArray(updates, chunk(kind, text, len));
    return 1;
}

const char *bt_acp_tool_kind(const char *kind)
{
    static const struct {
        const char *baton, *acp;
    } kinds[] = {{"command", "execute"}, {"file_change", "edit"}, {"web_search", "search"}};
    for (size_t i = 0; kind && i < BT_ARRAY_SIZE(kinds); i++)
        if (strcmp(kind, kinds[i].baton) == 0)
            return kinds[i].acp;
    return "other";
}

static const char *tool_title(const struct bt_item *item)
{
    if (item->kind == BT_ITEM_COMMAND && item->command)
        return item->command;
    if (item->name)
        return item->name;
    return bt_item_kind_name(item->kind);
}

/* ACP's ToolCallStatus of an item's status. */
static const char *tool_status(const char *status, int completed)
{
    if (!completed || !status || strcmp(status, "in_progress") == 0)
        return "in_progress";
    return strcmp(status, "completed") == 0 ? "completed" : "failed";
}

/* The content: the diffs of a file change's changes (remembered from the
 * event that had them: ACP's content replaces what was sent before), then
 * the output as one text block at the end. */
static void add_content(struct bt_acp_map *m, struct bt_acp_map_item *it, cJSON *u,
                        const struct bt_item *item, int completed)
{
    if (item->changes_json) {
        free(it->changes);
        it->changes = bt_xstrdup(item->changes_json);
    }
    cJSON *content = cJSON_CreateArray(), *locations = cJSON_CreateArray();
    if (it->changes)
        bt_acp_diff_add(content, locations, it->changes, m->cwd);
    if (completed && item->text && item->text_len) {
        cJSON *block = cJSON_CreateObject();
        cJSON_AddStringToObject(block, "type", "content");
        cJSON_AddItemToObject(block, "content", text_block(item->text, item->text_len));
        cJSON_AddItemToArray(content, block);
    }
    if (content->child)
        cJSON_AddItemToObject(u, "content", content);
    else
        cJSON_Delete(content);
    if (locations->child)
        cJSON_AddItemToObject(u, "locations", locations);
    else
        cJSON_Delete(locations);
}

/* A command's, a file change's or a tool's item. */
static int on_tool(struct bt_acp_map *m, const struct bt_event *ev, cJSON *updates)
{
    if (ev->type == BT_EVENT_ITEM_DELTA)
        return 0;
    struct bt_acp_map_item *it = item_of(m, ev->item.id);
    int completed = ev->type == BT_EVENT_ITEM_COMPLETED;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", it->announced ? "tool_call_update" : "tool_call");
    cJSON_AddStringToObject(u, "toolCallId", ev->item.id);
    if (!it->announced) {
        char *files = ev->item.name ? NULL : bt_acp_diff_title(ev->item.changes_json);
        cJSON_AddStringToObject(u, "title", files ? files : tool_title(&ev->item));
        free(files);
        cJSON_AddStringToObject(u, "kind", bt_acp_tool_kind(bt_item_kind_name(ev->item.kind)));
    }
    cJSON_AddStringToObject(u, "status", tool_status(ev->item.status, completed));
    add_content(m, it, u, &ev->item, completed);
    it->announced = 1;
    cJSON_AddItemToArray(updates, u);
    return 1;
}

/* ACP's PlanEntryStatus for a coder's word for a step's state: codex says
 * inProgress (turn/plan/updated, 0.171.0), claude's TodoWrite and the ACP
 * agents in_progress; case, '_', '-' and ' ' are not told apart. Unknown
 * words are pending. */
static const char *plan_status(const char *w, size_t n)
{
    char k[16];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < sizeof k; i++)
        if (w[i] != '_' && w[i] != '-' && w[i] != ' ')
            k[o++] = (char)tolower((unsigned char)w[i]);
    k[o] = '\0';
    if (strcmp(k, "inprogress") == 0 || strcmp(k, "active") == 0 || strcmp(k, "running") == 0)
        return "in_progress";
    if (strcmp(k, "completed") == 0 || strcmp(k, "done") == 0 || strcmp(k, "complete") == 0)
        return "completed";
    return "pending";
}

/* One plan entry from a line: "[status] step" (the plan text of
 * docs/events.md) keeps its status, whatever the coder calls it. */
static void add_entry(cJSON *entries, const char *line, size_t len)
{
    const char *status = "pending";
    const char *close = len > 1 && line[0] == '[' ? memchr(line, ']', len) : NULL;
    if (close && (size_t)(close - line) + 1 < len && close[1] == ' ') {
        status = plan_status(line + 1, (size_t)(close - line) - 1);
        len -= (size_t)(close - line) + 2;
        line = close + 2;
    }
    cJSON *e = cJSON_CreateObject();
    char *t = bt_xstrndup(line, len);
    cJSON_AddStringToObject(e, "content", t);
    free(t);
    cJSON_AddStringToObject(e, "priority", "medium");
    cJSON_AddStringToObject(e, "status", status);
    cJSON_AddItemToArray(entries, e);
}

static int on_plan(const struct bt_event *ev, cJSON *updates)
{
    if (ev->type != BT_EVENT_ITEM_COMPLETED || !ev->item.text)
        return 0;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", "plan");
    cJSON *entries = cJSON_AddArrayToObject(u, "entries");
    const char *p = ev->item.text, *end = p + ev->item.text_len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *s = p;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        size_t len = (size_t)(e - s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\r'))
            len--;
        if (len)
            add_entry(entries, s, len);
        p = nl ? nl + 1 : end;
    }
    cJSON_AddItemToArray(updates, u);
    return 1;
}

static int on_usage(const struct bt_event *ev, cJSON *updates)
{
    const struct bt_usage *us = &ev->usage;
    if (us->context_tokens < 0 || us->context_window <= 0)
        return 0;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", "usage_update");
    cJSON_AddNumberToObject(u, "used", (double)us->context_tokens);
    cJSON_AddNumberToObject(u, "size", (double)us->context_window);
    /* no cost: ACP's is the session's total, baton's cost_usd the turn's
     * (docs/events.md), and a wrong total is worse than none */
    cJSON_AddItemToArray(updates, u);
    return 1;
}

/* A question the coder asked the user (approval.requested of kind
 * user_input). Nobody answers it during the turn (docs/events.md), so the
 * editor is not asked but shown it: one tool_call that failed, titled
 * with the first question, its questions and options as text, saying the
 * user can answer with the next prompt. Its id is the event's run and
 * seq, the same live and replayed. */
static int on_question(const struct bt_event *ev, cJSON *updates)
{
    if (!ev->approval_kind || strcmp(ev->approval_kind, "user_input") != 0)
        return 0;
    struct bt_buf b = BT_BUF_INIT;
    bt_render_questions(ev->questions_json, &b);
    if (!b.len)
        bt_buf_addf(&b, "%s\n", ev->summary ? ev->summary : "");
    bt_buf_addf(&b, "(%s)", BT_RENDER_UNANSWERED);
    char *id = bt_xasprintf("question-%s-%lld", ev->run ? ev->run : "", (long long)ev->seq);
    char *title = bt_xasprintf("Question: %s", ev->summary ? ev->summary : "");
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "sessionUpdate", "tool_call");
    cJSON_AddStringToObject(u, "toolCallId", id);
    cJSON_AddStringToObject(u, "title", title);
    cJSON_AddStringToObject(u, "kind", "other");
    cJSON_AddStringToObject(u, "status", "failed");
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "content");
    cJSON_AddItemToObject(block, "content", text_block(b.data, b.len));
    cJSON_AddItemToArray(cJSON_AddArrayToObject(u, "content"), block);
    cJSON_AddItemToArray(updates, u);
    free(title);
    free(id);
    bt_buf_release(&b);
    return 1;
}

int bt_acp_map_event(struct bt_acp_map *m, const struct bt_event *ev, cJSON *updates)
{
    switch (ev->type) {
    case BT_EVENT_TURN_STARTED:
        free(m->cwd);
        m->cwd = ev->cwd ? bt_xstrdup(ev->cwd) : NULL;
        return 0;
    case BT_EVENT_ITEM_STARTED:
    case BT_EVENT_ITEM_DELTA:
    case BT_EVENT_ITEM_COMPLETED:
        if (!ev->item.id)
            return 0;
        /* a sub-agent's work, its words and plan too, is a tool call of
         * the turn, never the agent's own message or plan */
        if (ev->item.subagent)
            return on_tool(m, ev, updates);
        switch (ev->item.kind) {
        case BT_ITEM_MESSAGE:
        case BT_ITEM_REASONING: return on_text(m, ev, updates);
        case BT_ITEM_PLAN: return on_plan(ev, updates);
        default: return on_tool(m, ev, updates);
        }
    case BT_EVENT_USAGE: return on_usage(ev, updates);
    case BT_EVENT_APPROVAL_REQUESTED: return on_question(ev, updates);
    case BT_EVENT_TURN_STEERED:
        cJSON_AddItemToArray(updates, bt_acp_map_user_text(ev->steer_text));
        return 1;
    default: return 0;
    }
}

const char *bt_acp_stop_reason(enum bt_turn_status status)
{
    switch (status) {
    case BT_TURN_COMPLETED: return "end_turn";
    case BT_TURN_CANCELLED:
    case BT_TURN_INTERRUPTED: return "cancelled";
    default: return NULL;
    }
}
