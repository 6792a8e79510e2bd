/* SPDX-License-Identifier: MIT */
/*
 * serve-ask: the API of a person's answers to a running turn (--approval
 * ask, "approval": "ask"): GET /v1/conversations/{id}/requests lists the
 * approval requests and questions that wait, POST
 * /v1/conversations/{id}/requests/{n} decides one. The service stores the
 * decision and the run's owner gives it to the coder (service-ask.c); the
 * request waits for that off the loop (serve-task.c), up to
 * DECIDE_WAIT_MS: 202 once stored (taken says whether the owner took it
 * yet), 400 when the owner refused answers the coder cannot take (an
 * elicitation form's field), 409 when nothing (more) waits.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "serve.h"
#include "service.h"

/* How long a decision waits for the run's owner to take it, in ms (its
 * owner hears of it at once through its channel; one that is gone never). */
#define DECIDE_WAIT_MS 5000

enum MHD_Result bt_serve_ask_list(struct bt_serve_req *r)
{
    struct bt_service_requests w;
    if (bt_service_pending(r->srv->store, r->conv, &w) != 0)
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                             bt_store_errmsg(r->srv->store));
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"run\":");
    if (w.run[0])
        bt_json_quote(&b, w.run, strlen(w.run));
    else
        bt_buf_adds(&b, "null");
    bt_buf_adds(&b, ",\"requests\":[");
    for (size_t i = 0; i < w.n; i++) {
        if (i)
            bt_buf_addc(&b, ',');
        bt_buf_adds(&b, w.v[i].event_json);
    }
    bt_buf_adds(&b, "]}\n");
    bt_service_requests_release(&w);
    return bt_serve_reply(r, MHD_HTTP_OK, &b);
}

/* The body {"decision": "allow"|"always"|"deny", "answers"?: [[...]]}
 * into d (answers, owned, in *answers); NULL, or what is wrong with it
 * (static text). Each member once: a second is refused, not taken over
 * the first. */
static const char *parse_decision(const cJSON *j, struct bt_service_decision *d, char **answers)
{
    const cJSON *m, *answers_in = NULL;
    const char *word = NULL;
    int members = 0, other = 0;
    cJSON_ArrayForEach(m, j)
    {
        members++;
        if (strcmp(m->string, "decision") == 0 && cJSON_IsString(m))
            word = m->valuestring;
        else if (strcmp(m->string, "answers") == 0 && cJSON_IsArray(m))
            answers_in = m;
        else
            other = 1;
    }
    /* the count tells a member given twice (cJSON keeps both) */
    if (other || members != (word != NULL) + (answers_in != NULL))
        return "takes only decision (\"allow\", \"always\" or \"deny\") and answers (an "
               "array with an array of strings per question), each once";
    if (answers_in)
        *answers = cJSON_PrintUnformatted(answers_in);
    if (!word)
        return "decision is missing: \"allow\", \"always\" or \"deny\"";
    d->accept = strcmp(word, "allow") == 0 || strcmp(word, "always") == 0;
    d->always = strcmp(word, "always") == 0;
    if (!d->accept && strcmp(word, "deny") != 0)
        return "decision must be \"allow\", \"always\" or \"deny\"";
    if (*answers && !d->accept)
        return "answers go with decision \"allow\"";
    d->answers_json = *answers;
    return NULL;
}

enum MHD_Result bt_serve_ask_decide(struct bt_serve_req *r)
{
    struct bt_service_decision d = {.request_id = r->arg};
    char *answers = NULL;
    enum MHD_Result ret;
    cJSON *j = bt_serve_body_object(r, &ret);
    if (!j)
        return ret;
    const char *bad = parse_decision(j, &d, &answers);
    if (bad) {
        ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", bad);
    } else {
        d.wait_ms = DECIDE_WAIT_MS;
        ret = bt_serve_task_decide(r, &d);
    }
    free(answers);
    cJSON_Delete(j);
    return ret;
}
