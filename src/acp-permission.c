/* SPDX-License-Identifier: MIT */
/*
 * acp-permission: a coder's approval request asked of the editor as
 * session/request_permission (acp-int.h, docs/acp-agent.md). The turn's
 * thread sends the request and waits; the main thread reads the answer
 * (bt_acp_answered) and wakes it. A cancel wakes it too (declined); no
 * answer within the turn's limits leaves the request to --approval.
 *
 * Shapes: RequestPermissionRequest / RequestPermissionResponse of the ACP
 * schema in @agentclientprotocol/sdk 2.4.0; tool-calls, "Requesting
 * Permission" on agentclientprotocol.com.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acp-int.h"
#include "acp-map.h"
#include "json.h"
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
static cJSON *request(int64_t id, const char *sid, const struct bt_signal_request *rq)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddNumberToObject(m, "id", (double)id);
    cJSON_AddStringToObject(m, "method", "session/request_permission");
    cJSON *p = cJSON_AddObjectToObject(m, "params");
    cJSON_AddStringToObject(p, "sessionId", sid);
    cJSON *tc = cJSON_AddObjectToObject(p, "toolCall");
    char *call = rq->item_id ? NULL : bt_xasprintf("approval-%s", rq->request_id);
    cJSON_AddStringToObject(tc, "toolCallId", rq->item_id ? rq->item_id : call);
    free(call);
    cJSON_AddStringToObject(tc, "title", rq->summary ? rq->summary : rq->method);
    cJSON_AddStringToObject(tc, "kind", bt_acp_tool_kind(rq->approval_kind));
    cJSON_AddStringToObject(tc, "status", "pending");
    cJSON *options = cJSON_AddArrayToObject(p, "options");
    add_option(options, "allow", "Allow", "allow_once");
    add_option(options, "allow_always", kinds[kind_index(rq->approval_kind)].always,
               "allow_always");
    add_option(options, "reject", "Reject", "reject_once");
    return m;
}

/* How long a turn waits for the editor: the turn's idle limit, else its
 * whole limit, else until it answers or the turn is cancelled (0). */
static uint64_t wait_ms(const struct bt_acp_opts *o)
{
    return o->idle_timeout_ms ? o->idle_timeout_ms : o->timeout_ms;
}

static void deadline(struct timespec *ts, uint64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int bt_acp_ask(struct bt_acp *a, struct bt_acp_session *se, const struct bt_signal_request *rq)
{
    pthread_mutex_lock(&a->lock);
    if (bt_acp_must_stop(a, se)) {
        pthread_mutex_unlock(&a->lock);
        return BT_RUNNER_ASK_STOPPING;
    }
    unsigned bit = 1u << kind_index(rq->approval_kind);
    if (se->allow_always & bit) {
        pthread_mutex_unlock(&a->lock);
        return BT_RUNNER_ASK_ACCEPT;
    }
    struct bt_acp_ask *ask = bt_xcalloc(1, sizeof(*ask));
    *ask = (struct bt_acp_ask){.id = ++a->last_ask, .se = se, .next = a->asks};
    a->asks = ask;
    bt_acp_send(a, request(ask->id, se->id, rq), 1);
    uint64_t ms = wait_ms(a->opts);
    struct timespec until;
    if (ms)
        deadline(&until, ms);
    int rc = 0;
    while (ask->state == 0 && !bt_acp_must_stop(a, se) && rc != ETIMEDOUT)
        rc = ms ? pthread_cond_timedwait(&a->asked, &a->lock, &until)
                : pthread_cond_wait(&a->asked, &a->lock);
    for (struct bt_acp_ask **p = &a->asks; *p; p = &(*p)->next)
        if (*p == ask) {
            *p = ask->next;
            break;
        }
    if (ask->state == 1 && ask->always)
        se->allow_always |= bit;
    pthread_mutex_unlock(&a->lock);
    int answer = ask->state != 1 ? BT_RUNNER_ASK_NOBODY
                 : ask->accept   ? BT_RUNNER_ASK_ACCEPT
                                 : BT_RUNNER_ASK_DECLINE;
    free(ask);
    if (bt_acp_must_stop(a, se))
        return BT_RUNNER_ASK_STOPPING; /* nothing more runs, whatever came */
    return answer;
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
    pthread_mutex_lock(&a->lock);
    for (struct bt_acp_ask *k = a->asks; k; k = k->next) {
        if ((double)k->id != id->valuedouble || k->state)
            continue;
        /* an error, or an answer of another shape: no answer, the policy decides */
        k->state = how ? 1 : 2;
        k->accept = how && strcmp(how, "selected") == 0 && option &&
                    (strcmp(option, "allow") == 0 || strcmp(option, "allow_always") == 0);
        k->always = k->accept && strcmp(option, "allow_always") == 0;
        break;
    }
    pthread_cond_broadcast(&a->asked);
    pthread_mutex_unlock(&a->lock);
}
