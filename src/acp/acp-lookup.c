/* SPDX-License-Identifier: MIT */
/*
 * acp-lookup: `baton acp`'s sessions by id (acp-int.h), for the session
 * methods (acp-session.c), a prompt and its cancel (acp-prompt.c) and a
 * permission's answer (acp-permission.c). Its own file below them: it
 * calls none of them, so they form no circle.
 */
#include <stdlib.h>
#include <string.h>

#include "acp-int.h"
#include "json.h"
#include "util.h"

struct bt_acp_session *bt_acp_session_find(struct bt_acp *a, const char *id)
{
    for (struct bt_acp_session *se = a->sessions; se; se = se->next)
        if (strcmp(se->id, id) == 0)
            return se;
    return NULL;
}

struct bt_acp_session *bt_acp_session_of(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    const char *sid = bt_json_str(params, "sessionId");
    if (!sid) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, "sessionId (a string) is missing", 0);
        return NULL;
    }
    pthread_mutex_lock(&a->lock);
    struct bt_acp_session *se = bt_acp_session_find(a, sid);
    int closed = se && se->closed;
    pthread_mutex_unlock(&a->lock);
    if (!se || closed) {
        char *msg = bt_xasprintf(closed ? "session '%s' was closed (session/load or "
                                          "session/resume opens it again)"
                                        : "no session '%s' in this baton acp (session/load "
                                          "opens a stored one)",
                                 sid);
        bt_acp_error(a, id, BT_ACP_NOT_FOUND, msg, 0);
        free(msg);
        return NULL;
    }
    return se;
}
