/* SPDX-License-Identifier: MIT */
/*
 * acp-permission: a coder's approval request asked of the editor as
 * session/request_permission (acp-int.h, docs/acp-agent.md). The turn
 * keeps the request for a person (--approval ask underneath, src/turn-ask.c)
 * and goes on: the turn's thread sends the request from its
 * approval.requested event and returns; the main thread reads the answer
 * (bt_acp_answered) and gives it as a decision through the service, as
 * `baton approve` would. A cancel stops the turn, which declines what
 * waits; no answer within the idle limit is the policy's, by "timeout".
 *
 * Shapes: RequestPermissionRequest / RequestPermissionResponse of the ACP
 * schema in @agentclientprotocol/sdk 2.4.0; tool-calls, "Requesting
 * Permission" on agentclientprotocol.com.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acp-int.h"
#include "acp-map.h"
#include "json.h"
#include "service.h"
#include "util.h"

static void add_option(cJSON *options, const char *id, const char *name, const char *kind)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "optionId", id);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddItemToArray(options, o);
}

/* Approval kinds (parser-signal.h), each one bit of a session's
 * allow_always, and what "allow always" covers for each. */
static const struct {
    const char *kind, *always;
} kinds[] = {
    {"command", "Allow commands for the rest of this session"},
    {"file_change", "Allow file changes for the rest of this session"},
    {"permissions", "Allow permission requests for the rest of this session"},
    {NULL, "Allow such requests for the rest of this session"}, /* any other */
};

static size_t kind_index(const char *kind)
{
    size_t i = 0;
    while (kinds[i].kind && !(kind && strcmp(kind, kinds[i].kind) == 0))
        i++;
    return i;
}

/* The request: the tool call it is about (the item the coder names, so
 * the editor shows it on the tool_call it already has) and three options;
 * allow_always is for requests of this one's kind. */
static cJSON *request(int64_t id, const char *sid, const struct bt_event *ev, const char *rid)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddNumberToObject(m, "id", (double)id);
    cJSON_AddStringToObject(m, "method", "session/request_permission");
    cJSON *p = cJSON_AddObjectToObject(m, "params");
    cJSON_AddStringToObject(p, "sessionId", sid);
    cJSON *tc = cJSON_AddObjectToObject(p, "toolCall");
    char *call = ev->item.id ? NULL : bt_xasprintf("approval-%s", rid);
    cJSON_AddStringToObject(tc, "toolCallId", ev->item.id ? ev->item.id : call);
    free(call);
    cJSON_AddStringToObject(tc, "title", ev->summary ? ev->summary : "approval");
    cJSON_AddStringToObject(tc, "kind", bt_acp_tool_kind(ev->approval_kind));
    cJSON_AddStringToObject(tc, "status", "pending");
    cJSON *options = cJSON_AddArrayToObject(p, "options");
    add_option(options, "allow", "Allow", "allow_once");
    add_option(options, "allow_always", kinds[kind_index(ev->approval_kind)].always,
               "allow_always");
    add_option(options, "reject", "Reject", "reject_once");
    return m;
}

/* The person's decision, as `baton approve` gives it: stored, then the
 * run's owner (the session's turn) takes it. A late one is refused. */
static void decide(struct bt_store *s, const char *conv, const char *rid, int accept, int always)
{
    struct bt_service_decision d = {.request_id = rid, .accept = accept, .always = always};
    struct bt_service_decided out;
    bt_service_decide(s, conv, &d, &out); /* refused: the request ended first */
    free(out.message);
}

void bt_acp_ask(struct bt_acp *a, struct bt_acp_session *se, struct bt_store *s,
                const struct bt_event *ev)
{
    char rid[BT_EVENT_REQUEST_ID_MAX];
    bt_event_request_id(ev->request_id, rid, sizeof(rid));
    unsigned bit = 1u << kind_index(ev->approval_kind);
    pthread_mutex_lock(&a->lock);
    if (bt_acp_must_stop(a, se)) {
        pthread_mutex_unlock(&a->lock);
        return; /* the stop declines it, by "cancel" */
    }
    if (se->allow_always & bit) {
        pthread_mutex_unlock(&a->lock);
        decide(s, se->id, rid, 1, 0);
        return;
    }
    struct bt_acp_ask *ask = bt_xcalloc(1, sizeof(*ask));
    ask->id = ++a->last_ask;
    ask->kind_bit = bit;
    snprintf(ask->conv, sizeof(ask->conv), "%s", se->id);
    snprintf(ask->request, sizeof(ask->request), "%s", rid);
    ask->next = a->asks;
    a->asks = ask;
    bt_acp_send(a, request(ask->id, se->id, ev, rid), 1);
    pthread_mutex_unlock(&a->lock);
}

void bt_acp_answered(struct bt_acp *a, const cJSON *msg)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    if (!cJSON_IsNumber(id))
        return;
    const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(msg, "result"), "outcome");
    const char *how = bt_json_str(outcome, "outcome");
    const char *option = bt_json_str(outcome, "optionId");
    int accept = how && strcmp(how, "selected") == 0 && option &&
                 (strcmp(option, "allow") == 0 || strcmp(option, "allow_always") == 0);
    int always = accept && strcmp(option, "allow_always") == 0;
    struct bt_acp_ask *ask = NULL;
    pthread_mutex_lock(&a->lock);
    for (struct bt_acp_ask **p = &a->asks; *p; p = &(*p)->next) {
        if ((double)(*p)->id != id->valuedouble)
            continue;
        ask = *p;
        *p = ask->next;
        break;
    }
    struct bt_acp_session *se = ask && always ? bt_acp_session_find(a, ask->conv) : NULL;
    if (se)
        se->allow_always |= ask->kind_bit;
    pthread_mutex_unlock(&a->lock);
    /* an error, or an answer of another shape: nobody decided; the turn's
     * idle limit does (the policy, by "timeout") */
    if (ask && how)
        decide(a->store, ask->conv, ask->request, accept, always);
    free(ask);
}

void bt_acp_asks_free(struct bt_acp *a)
{
    while (a->asks) {
        struct bt_acp_ask *next = a->asks->next;
        free(a->asks);
        a->asks = next;
    }
}
