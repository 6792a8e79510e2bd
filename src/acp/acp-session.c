/* SPDX-License-Identifier: MIT */
/*
 * acp-session: `baton acp`'s session methods (acp-int.h): new, load and
 * resume, list, set_config_option, close. They run on the main thread
 * with its store handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acp-int.h"
#include "acp-map.h"
#include "coder.h"
#include "input.h"
#include "json.h"
#include "util.h"

#define BT_ACP_LIST_PAGE 100 /* sessions per session/list answer */

void bt_acp_session_free(struct bt_acp_session *se)
{
    free(se->cwd);
    free(se->coder);
    free(se->model);
    for (struct bt_acp_waiting *w = se->waiting, *next; w; w = next) {
        next = w->next;
        cJSON_Delete(w->id);
        free(w);
    }
    free(se);
}

static struct bt_acp_session *session_add(struct bt_acp *a, const char *id, const char *cwd,
                                          const char *coder, const char *model, int stored)
{
    struct bt_acp_session *se = bt_xcalloc(1, sizeof(*se));
    memcpy(se->id, id, BT_ID_SIZE);
    se->cwd = bt_xstrdup(cwd);
    se->coder = bt_xstrdup(coder);
    se->model = model ? bt_xstrdup(model) : NULL;
    se->stored = stored;
    pthread_mutex_lock(&a->lock);
    se->next = a->sessions;
    a->sessions = se;
    pthread_mutex_unlock(&a->lock);
    return se;
}

/* params.cwd, an absolute path to a directory; NULL with the error answered. */
/* params.cwd, an absolute path to a directory, resolved as `baton run -C`
 * resolves it (owned); NULL with the error answered. */
static char *cwd_of(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    const char *cwd = bt_json_str(params, "cwd");
    char *abs = NULL, *why = NULL;
    if (cwd && cwd[0] == '/')
        why = bt_input_cwd(cwd, &abs);
    if (!abs) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS,
                     why   ? why
                     : cwd ? "cwd is not an absolute path"
                           : "cwd (an absolute path) is missing",
                     0);
        free(why);
        return NULL;
    }
    return abs;
}

/* Answer id with r and se's options, se then announced: under the lock,
 * so a model list that comes meanwhile is either in these options or
 * sent to se as an update. Then the coder's models are asked for, if
 * they are not listed yet. Main thread. */
static void answer_options(struct bt_acp *a, const cJSON *id, cJSON *r, struct bt_acp_session *se)
{
    pthread_mutex_lock(&a->lock);
    cJSON_AddItemToObject(r, "configOptions", bt_acp_session_options(a, a->store, se));
    bt_acp_result(a, id, r, 1);
    se->announced = 1;
    pthread_mutex_unlock(&a->lock);
    bt_acp_models_want(a, se->coder, se->cwd); /* only this thread changes them */
}

void bt_acp_session_new(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    char *cwd = cwd_of(a, id, params);
    if (!cwd)
        return;
    char sid[BT_ID_SIZE];
    if (bt_id_new(sid) != 0) {
        bt_acp_error(a, id, BT_ACP_INTERNAL_ERROR, "cannot make a session id", 0);
        free(cwd);
        return;
    }
    const char *coder = a->opts->coder ? a->opts->coder : bt_coders[0]->name;
    struct bt_acp_session *se = session_add(a, sid, cwd, coder, a->opts->model, 0);
    free(cwd);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "sessionId", se->id);
    answer_options(a, id, r, se);
}

/* --- load: the stored transcript again -------------------------------- */

struct replay {
    struct bt_acp *a;
    const char *sid;
    struct bt_acp_map map;
};

static int replay_event(void *data, const struct bt_store_event *sev)
{
    struct replay *r = data;
    struct bt_event ev;
    struct bt_event_doc *doc;
    if (bt_event_parse(sev->data, sev->len, &ev, &doc) != 0)
        return 0; /* a newer baton's event, or damage: skipped as `show` does */
    cJSON *updates = cJSON_CreateArray();
    bt_acp_map_event(&r->map, &ev, updates);
    bt_event_doc_free(doc);
    cJSON *u;
    while ((u = cJSON_DetachItemFromArray(updates, 0)) != NULL)
        bt_acp_update(r->a, r->sid, u, 0);
    cJSON_Delete(updates);
    return 0;
}

static void replay_run(struct replay *r, const char *run)
{
    bt_acp_map_init(&r->map);
    bt_store_event_each(r->a->store, run, 1, replay_event, r);
    bt_acp_map_release(&r->map);
}

/* After the events of run, its turn's changes as they were sent live,
 * when run is the last of its turn (the changes are that run's). */
static void replay_changes(struct bt_acp *a, const char *sid, const char *run,
                           const struct bt_store_run *runs, size_t n)
{
    int64_t turn = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(runs[i].id, run) == 0)
            turn = runs[i].turn;
        else if (turn && runs[i].turn == turn)
            return; /* a later run of the same turn */
    }
    cJSON *u = turn ? bt_acp_changes(a->store, sid, run, turn) : NULL;
    if (u)
        bt_acp_update(a, sid, u, 0);
}

/* The transcript as `baton show` has it: each prompt sent as a
 * user_message_chunk, each answer as the events of its run. A turn run
 * again (retry) has an answer per run, each replayed; prompts sent
 * together in one turn are one chunk each before it; each turn's changes
 * after its last run's events. */
static void replay(struct bt_acp *a, const char *sid)
{
    struct bt_store_message *m = NULL;
    size_t n = 0;
    if (bt_store_message_list(a->store, sid, &m, &n) != 0)
        return;
    struct bt_store_run *runs = NULL;
    size_t nr = 0;
    if (bt_store_run_list(a->store, sid, &runs, &nr) != 0)
        nr = 0; /* the turns' changes are left out, the transcript is not */
    struct replay r = {.a = a, .sid = sid};
    for (size_t i = 0; i < n; i++) {
        if (m[i].role == BT_STORE_ROLE_USER && m[i].state != BT_STORE_MSG_QUEUED)
            bt_acp_update(a, sid, bt_acp_map_user_text(m[i].text), 0);
        else if (m[i].role == BT_STORE_ROLE_ASSISTANT && m[i].run[0]) {
            replay_run(&r, m[i].run);
            replay_changes(a, sid, m[i].run, runs, nr);
        }
    }
    bt_store_run_list_free(runs, nr);
    bt_store_message_list_free(m, n);
}

/* session/load (with_replay) and session/resume: the stored conversation
 * as a session of this agent. Its own directory stays the turns' one
 * (params.cwd is the editor's). */
static void open_session(struct bt_acp *a, const cJSON *id, const cJSON *params, int with_replay)
{
    const char *sid = bt_json_str(params, "sessionId");
    if (!sid) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, "sessionId (a string) is missing", 0);
        return;
    }
    pthread_mutex_lock(&a->lock);
    struct bt_acp_session *se = bt_acp_session_find(a, sid);
    pthread_mutex_unlock(&a->lock);
    if (!se) {
        struct bt_store_conversation conv;
        if (!bt_id_valid(sid) || bt_store_conversation_get(a->store, sid, &conv) != 0) {
            char *msg = bt_xasprintf("no conversation '%s' in baton's store", sid);
            bt_acp_error(a, id, BT_ACP_NOT_FOUND, msg, 0);
            free(msg);
            return;
        }
        se = session_add(a, conv.id, conv.cwd, conv.coder, conv.model, 1);
        se->worktree = conv.worktree.path != NULL;
        bt_store_conversation_release(&conv);
    }
    pthread_mutex_lock(&a->lock);
    se->closed = 0; /* opened again after session/close */
    pthread_mutex_unlock(&a->lock);
    if (with_replay && se->stored)
        replay(a, se->id);
    cJSON *r = cJSON_CreateObject();
    answer_options(a, id, r, se);
}

void bt_acp_session_load(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    open_session(a, id, params, 1);
}

void bt_acp_session_resume(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    open_session(a, id, params, 0);
}

/* --- list, config options, close ----------------------------------------- */

/* params: {cwd?, cursor?}; the cursor is the offset of the next page. */
/* A member of params that, when there and not null, must be a string;
 * and for cwd an absolute path (ListSessionsRequest). */
static const char *list_param_problem(const cJSON *params)
{
    const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(params, "cwd");
    const cJSON *cursor = cJSON_GetObjectItemCaseSensitive(params, "cursor");
    if (cwd && !cJSON_IsNull(cwd) && (!cJSON_IsString(cwd) || cwd->valuestring[0] != '/'))
        return "cwd is an absolute path";
    if (cursor && !cJSON_IsNull(cursor) && !cJSON_IsString(cursor))
        return "not a cursor of baton acp";
    return NULL;
}

void bt_acp_session_list(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    const char *problem = list_param_problem(params);
    if (problem) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, problem, 0);
        return;
    }
    const char *asked = bt_json_str(params, "cwd");
    char *resolved = NULL, *why = asked ? bt_input_cwd(asked, &resolved) : NULL;
    free(why); /* a directory that is not there: compared as given */
    const char *cwd = resolved ? resolved : asked;
    const char *cursor = bt_json_str(params, "cursor");
    char *end = NULL;
    long long skip = cursor ? strtoll(cursor, &end, 10) : 0;
    if (cursor && (end == cursor || *end || skip < 0)) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, "not a cursor of baton acp", 0);
        free(resolved);
        return;
    }
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (bt_store_conversation_list(a->store, 0, &v, &n) != 0) {
        bt_acp_error(a, id, BT_ACP_INTERNAL_ERROR, bt_store_errmsg(a->store), 0);
        free(resolved);
        return;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON *sessions = cJSON_AddArrayToObject(r, "sessions");
    long long seen = 0, listed = 0;
    for (size_t i = 0; i < n; i++) {
        if (cwd && strcmp(v[i].cwd, cwd) != 0)
            continue;
        if (seen++ < skip)
            continue;
        if (listed == BT_ACP_LIST_PAGE) {
            char next[32];
            snprintf(next, sizeof next, "%lld", seen - 1);
            cJSON_AddStringToObject(r, "nextCursor", next);
            break;
        }
        char when[32];
        bt_time_rfc3339(v[i].updated_ms, when);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "sessionId", v[i].id);
        cJSON_AddStringToObject(e, "cwd", v[i].cwd);
        cJSON_AddStringToObject(e, "title", v[i].title);
        cJSON_AddStringToObject(e, "updatedAt", when);
        cJSON_AddItemToArray(sessions, e);
        listed++;
    }
    bt_store_conversation_list_free(v, n);
    free(resolved);
    bt_acp_result(a, id, r, 0);
}

/* params: {sessionId, configId, value}. The coder and model are a
 * conversation's from its first prompt on: its native session is that
 * coder's. */
void bt_acp_session_set_option(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    struct bt_acp_session *se = bt_acp_session_of(a, id, params);
    if (!se)
        return;
    const char *config = bt_json_str(params, "configId");
    const char *value = bt_json_str(params, "value");
    const char *why = NULL;
    int is_wt = config && strcmp(config, "worktree") == 0;
    if (!config || !value)
        why = "configId and value (strings) are needed";
    else if (strcmp(config, "coder") != 0 && strcmp(config, "model") != 0 && !is_wt)
        why = "baton's options are coder, model and worktree";
    else if (se->stored)
        why = "the coder, model and worktree are fixed by a session's first prompt";
    else if (is_wt && strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
        why = "worktree is on or off";
    else if (strcmp(config, "coder") == 0 && !bt_coder_find(value))
        why = "no such coder (see `baton coders`)";
    else if (strcmp(config, "model") == 0 && strcmp(value, "default") != 0)
        why = bt_input_model_problem(value); /* as -m takes it */
    if (why) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, why, 0);
        return;
    }
    pthread_mutex_lock(&a->lock);
    if (is_wt) {
        se->worktree = strcmp(value, "on") == 0;
    } else {
        char **field = strcmp(config, "coder") == 0 ? &se->coder : &se->model;
        free(*field);
        *field = strcmp(config, "model") == 0 && strcmp(value, "default") == 0 ? NULL
                                                                               : bt_xstrdup(value);
    }
    pthread_mutex_unlock(&a->lock);
    cJSON *r = cJSON_CreateObject();
    answer_options(a, id, r, se);
}

/* session/close: the session's turn is cancelled (and what it queued
 * taken back); the conversation stays stored, and the session takes no
 * more prompts or options until session/load or session/resume opens it
 * again (its thread, if one runs, is joined as any other). */
void bt_acp_session_close(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    struct bt_acp_session *se = bt_acp_session_of(a, id, params);
    if (!se)
        return;
    bt_acp_cancel(a, params);
    pthread_mutex_lock(&a->lock);
    se->closed = 1;
    pthread_mutex_unlock(&a->lock);
    bt_acp_result(a, id, NULL, 0);
}
