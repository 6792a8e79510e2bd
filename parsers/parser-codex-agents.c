/* SPDX-License-Identifier: MIT */
/*
 * codex parser, sub-agents: each sub-agent thread's turn as one item of kind
 * subagent (see parser-codex-agents.h).
 */
#include "parser-codex-agents.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* A bound on what one parser remembers (input-driven: a coder could name
 * any number of threads); far above the handful of agents a turn spawns. */
#define BT_CODEX_MAX_AGENTS 64

struct agent {
    char *thread; /* its thread id */
    char *name;   /* nickname, role or path; NULL: not named */
    char *text;   /* its last message; NULL: none yet */
};

struct bt_codex_agents {
    struct agent list[BT_CODEX_MAX_AGENTS];
    size_t n;
};

struct bt_codex_agents *bt_codex_agents_new(void)
{
    return bt_xcalloc(1, sizeof(struct bt_codex_agents));
}

void bt_codex_agents_free(struct bt_codex_agents *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->list[i].thread);
        free(a->list[i].name);
        free(a->list[i].text);
    }
    free(a);
}

/* The sub-agent of a thread, added when new; NULL when the list is full. */
static struct agent *find(struct bt_codex_agents *a, const char *thread)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->list[i].thread, thread) == 0)
            return &a->list[i];
    if (a->n == BT_CODEX_MAX_AGENTS)
        return NULL;
    struct agent *g = &a->list[a->n++];
    g->thread = bt_xstrdup(thread);
    return g;
}

static void set(char **field, const char *s)
{
    free(*field);
    *field = s ? bt_xstrdup(s) : NULL;
}

static void on_thread(struct bt_codex_agents *a, const char *thread, const cJSON *t)
{
    struct agent *g = find(a, thread);
    if (!g)
        return;
    /* Thread.source {subAgent: {thread_spawn: {agent_path, agent_nickname,
     * agent_role, parent_thread_id, depth}}} (v2/SessionSource) */
    const cJSON *src = bt_json_obj(t, "source");
    const cJSON *spawn = bt_json_obj(bt_json_obj(src, "subAgent"), "thread_spawn");
    const char *name = bt_json_str(t, "agentNickname");
    if (!name)
        name = bt_json_str(t, "agentRole");
    if (!name)
        name = bt_json_str(spawn, "agent_nickname");
    if (!name)
        name = bt_json_str(spawn, "agent_path");
    if (name)
        set(&g->name, name);
}

static void emit_item(const struct agent *g, const char *thread, enum bt_event_type type,
                      const char *status, const char *detail, const struct bt_parser_sink *sink)
{
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.item.id = thread;
    ev.item.subagent = thread;
    ev.item.kind = BT_ITEM_SUBAGENT;
    ev.item.status = status;
    ev.item.name = g ? g->name : NULL;
    ev.item.text = g ? g->text : NULL;
    ev.item.text_len = ev.item.text ? strlen(ev.item.text) : 0;
    ev.item.detail_json = detail;
    sink->event(sink->data, &ev);
}

static void turn_started(struct bt_codex_agents *a, const char *thread,
                         const struct bt_parser_sink *sink)
{
    struct agent *g = find(a, thread);
    if (g)
        set(&g->text, NULL); /* a follow-up task: a new turn of the same agent */
    emit_item(g, thread, BT_EVENT_ITEM_STARTED, "in_progress", NULL, sink);
}

static void turn_completed(struct bt_codex_agents *a, const char *thread, const cJSON *turn,
                           const struct bt_parser_sink *sink)
{
    const char *status = bt_json_str(turn, "status");
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "thread", thread);
    if (status)
        cJSON_AddStringToObject(d, "status", status);
    const cJSON *err = bt_json_obj(turn, "error");
    if (err && bt_json_str(err, "message"))
        cJSON_AddStringToObject(d, "error", bt_json_str(err, "message"));
    char *detail = cJSON_PrintUnformatted(d);
    cJSON_Delete(d);
    int ok = status && strcmp(status, "completed") == 0;
    emit_item(find(a, thread), thread, BT_EVENT_ITEM_COMPLETED, ok ? "completed" : "failed", detail,
              sink);
    cJSON_free(detail);
}

void bt_codex_agents_message(struct bt_codex_agents *a, const char *thread, const char *text)
{
    struct agent *g = find(a, thread);
    if (g && text)
        set(&g->text, text);
}

const char *bt_codex_agents_thread_of(const char *own, const cJSON *params)
{
    const char *t = bt_json_str(params, "threadId");
    if (!t)
        t = bt_json_str(bt_json_obj(params, "thread"), "id");
    return t && own && strcmp(t, own) != 0 ? t : NULL;
}

int bt_codex_agents_note(struct bt_codex_agents *a, const char *thread, const char *method,
                         const cJSON *params, const struct bt_parser_sink *sink)
{
    if (strcmp(method, "turn/started") == 0) {
        turn_started(a, thread, sink);
    } else if (strcmp(method, "turn/completed") == 0) {
        turn_completed(a, thread, bt_json_obj(params, "turn"), sink);
    } else if (strcmp(method, "thread/started") == 0) {
        on_thread(a, thread, bt_json_obj(params, "thread"));
    } else if (strcmp(method, "error") == 0) {
        const char *msg = bt_json_str(bt_json_obj(params, "error"), "message");
        char *text = bt_xasprintf("codex sub-agent %s: %s", thread, msg ? msg : "error");
        bt_parser_warn(sink, "coder", text, NULL, 0);
        free(text);
    } else if (strcmp(method, "thread/tokenUsage/updated") != 0) {
        return 0;
    }
    return 1;
}
