/* SPDX-License-Identifier: MIT */
/*
 * runner-form: the answer to an elicitation form, the same for ACP
 * elicitation/create (CreateElicitationResponse, @agentclientprotocol/sdk
 * 2.4.0) and codex mcpServer/elicitation/request
 * (McpServerElicitationRequestResponse, codex-cli 0.171.0): {action:
 * "accept" | "decline" | "cancel", content?: {NAME: value}} (runner.h).
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "parser-form.h"
#include "runner.h"

char *bt_runner_form_problem(const struct bt_signal_request *rq, const char *answers_json)
{
    if (!rq->params_json)
        return bt_xstrdup("is a form baton cannot fill (a web address to visit, or fields of a "
                          "kind it does not know): it can only be declined");
    cJSON *content = NULL;
    char *why = NULL;
    if (bt_form_content(rq->params_json, answers_json, &content, &why) == 0)
        cJSON_Delete(content);
    return why;
}

int bt_runner_form_answer(const struct bt_signal_request *rq, const struct bt_runner_decision *d,
                          cJSON *result, const struct bt_parser_sink *sink)
{
    cJSON *content = NULL;
    char *why = NULL;
    if (d->accept && bt_form_content(rq->params_json, d->answers_json, &content, &why) != 0) {
        bt_parser_warn(sink, "unsupported_request",
                       "the answers do not fit the form; it is declined", why, strlen(why));
    }
    free(why);
    const char *action = content ? "accept" : strcmp(d->by, "cancel") == 0 ? "cancel" : "decline";
    cJSON_AddStringToObject(result, "action", action);
    if (content)
        cJSON_AddItemToObject(result, "content", content);
    return content != NULL;
}
