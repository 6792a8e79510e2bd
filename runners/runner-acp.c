/* SPDX-License-Identifier: MIT */
/*
 * ACP runner: handshake, session setup (new, resume or load), the prompt,
 * cancel and the answers to the agent's requests, for every ACP coder. The
 * message order and the protocol source: runner-acp.h.
 */
#include "runner-acp.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"

struct acp_runner {
    const struct bt_runner_config *cfg;
    const struct bt_acp_profile *profile;
    char *session_id;         /* known after the session request's answer */
    int can_load;             /* initialize: agentCapabilities.loadSession */
    int can_resume;           /* initialize: agentCapabilities.sessionCapabilities.resume */
    int prompted;             /* session/prompt written */
    int cancelled;            /* session/cancel written */
    struct bt_runner_ids ids; /* requests written and answered */
};

int bt_acp_parse_version(const char *text, char **version)
{
    *version = bt_find_version(text);
    return *version ? 0 : BT_EPROTO;
}

int bt_acp_argv(const struct bt_runner_config *cfg, struct bt_strv *argv, const char *const *fixed,
                const char *model_flag)
{
    if (cfg->native_session_id && !bt_runner_id_ok(cfg->native_session_id))
        return -EINVAL;
    if (cfg->model && cfg->model[0] == '-')
        return -EINVAL;
    for (size_t i = 0; fixed[i]; i++)
        bt_strv_push(argv, fixed[i]);
    if (cfg->model && model_flag)
        bt_strv_pushf(argv, "%s=%s", model_flag, cfg->model);
    return 0;
}

int bt_acp_handoff_argv(const struct bt_runner_config *cfg, struct bt_strv *argv,
                        const char *resume_flag)
{
    const char *id = cfg->native_session_id;
    if (!id)
        return -ENOENT;
    if (!bt_runner_id_ok(id) || (cfg->model && cfg->model[0] == '-'))
        return -EINVAL;
    bt_strv_pushf(argv, "%s=%s", resume_flag, id);
    if (cfg->model)
        bt_strv_pushf(argv, "--model=%s", cfg->model);
    return 0;
}

void *bt_acp_runner_create(const struct bt_runner_config *cfg, const struct bt_acp_profile *p)
{
    struct acp_runner *r = bt_xcalloc(1, sizeof(*r));
    r->cfg = cfg;
    r->profile = p;
    return r;
}

void bt_acp_runner_destroy(void *st)
{
    struct acp_runner *r = st;
    if (!r)
        return;
    free(r->session_id);
    free(r);
}

static cJSON *message(const char *method, cJSON **params)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddStringToObject(m, "method", method);
    *params = cJSON_AddObjectToObject(m, "params");
    return m;
}

static cJSON *request(struct acp_runner *r, int id, const char *method, cJSON **params)
{
    bt_runner_ids_sent(&r->ids, id);
    cJSON *m = message(method, params);
    cJSON_AddNumberToObject(m, "id", id);
    return m;
}

void bt_acp_runner_start(void *st, struct bt_buf *out)
{
    struct acp_runner *r = st;
    cJSON *params;
    cJSON *m = request(r, BT_ACP_ID_INITIALIZE, "initialize", &params);
    cJSON_AddNumberToObject(params, "protocolVersion", 1);
    bt_runner_add_client_info(params);
    /* no fs or terminal methods: the agent uses its own tools */
    cJSON *caps = cJSON_AddObjectToObject(params, "clientCapabilities");
    cJSON *fs = cJSON_AddObjectToObject(caps, "fs");
    cJSON_AddBoolToObject(fs, "readTextFile", 0);
    cJSON_AddBoolToObject(fs, "writeTextFile", 0);
    cJSON_AddBoolToObject(caps, "terminal", 0);
    bt_runner_put_json(out, m);
}

static void fail(struct acp_runner *r, const struct bt_parser_sink *sink, enum bt_error_kind kind,
                 const char *what, const char *why)
{
    struct bt_buf msg = BT_BUF_INIT;
    bt_buf_addf(&msg, "%s %s%s%s", r->profile->name, what, why ? ": " : "", why ? why : "");
    bt_runner_fail(sink, kind, msg.data);
    bt_buf_release(&msg);
}

/* The initialize answer: protocol version 1, and how a session resumes. */
static void on_initialize(struct acp_runner *r, const struct bt_signal_response *sig,
                          struct bt_buf *out, const struct bt_parser_sink *sink)
{
    cJSON *res = sig->is_error || !sig->result_json ? NULL : cJSON_Parse(sig->result_json);
    if (!res) {
        fail(r, sink, BT_ERROR_KIND_PROTOCOL_MISMATCH, "refused the ACP handshake",
             sig->error_message);
        return;
    }
    int64_t version = bt_json_int(res, "protocolVersion");
    const cJSON *caps = bt_json_obj(res, "agentCapabilities");
    const cJSON *scaps = caps ? bt_json_obj(caps, "sessionCapabilities") : NULL;
    r->can_load = caps && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(caps, "loadSession"));
    r->can_resume = scaps && bt_json_obj(scaps, "resume") != NULL;
    cJSON_Delete(res);
    if (version != 1) {
        fail(r, sink, BT_ERROR_KIND_PROTOCOL_MISMATCH,
             "speaks an ACP protocol version other than 1", NULL);
        return;
    }
    const char *id = r->cfg->native_session_id;
    const char *method = !id ? "session/new" : r->can_resume ? "session/resume" : "session/load";
    if (id && r->profile->resume_refusal) {
        fail(r, sink, BT_ERROR_KIND_RESUME_FAILED, r->profile->resume_refusal, NULL);
        return;
    }
    if (id && !r->can_resume && !r->can_load) {
        fail(r, sink, BT_ERROR_KIND_RESUME_FAILED,
             "cannot resume a session: its ACP agent offers neither session/resume nor "
             "session/load",
             NULL);
        return;
    }
    cJSON *params;
    cJSON *m = request(r, BT_ACP_ID_SESSION, method, &params);
    if (id)
        cJSON_AddStringToObject(params, "sessionId", id);
    cJSON_AddStringToObject(params, "cwd", r->cfg->cwd ? r->cfg->cwd : "/");
    cJSON_AddArrayToObject(params, "mcpServers");
    bt_runner_put_json(out, m);
}

static void send_prompt(struct acp_runner *r, struct bt_buf *out)
{
    cJSON *params;
    cJSON *m = request(r, BT_ACP_ID_PROMPT, "session/prompt", &params);
    cJSON_AddStringToObject(params, "sessionId", r->session_id);
    bt_runner_add_text_input(params, "prompt", r->cfg->prompt);
    bt_runner_put_json(out, m);
    r->prompted = 1;
}

/* The session request's answer: session/new names the session; load and
 * resume answer for the one asked for. */
static void on_session(struct acp_runner *r, const struct bt_signal_response *sig,
                       struct bt_buf *out, const struct bt_parser_sink *sink)
{
    const char *asked = r->cfg->native_session_id;
    if (sig->is_error) {
        enum bt_error_kind kind = sig->error_code == -32000 ? BT_ERROR_KIND_AUTH_REQUIRED
                                  : asked                   ? BT_ERROR_KIND_RESUME_FAILED
                                                            : BT_ERROR_KIND_PROTOCOL_MISMATCH;
        if (kind == BT_ERROR_KIND_AUTH_REQUIRED)
            bt_runner_fail(sink, kind, r->profile->auth_message);
        else
            fail(r, sink, kind,
                 asked ? "could not resume the session" : "could not start a session",
                 sig->error_message);
        return;
    }
    const char *id = asked ? asked : sig->session_id;
    if (!id || !bt_runner_id_ok(id)) {
        /* it could not be passed back safely on the next turn */
        fail(r, sink, BT_ERROR_KIND_PROTOCOL_MISMATCH, "named a session id baton cannot use", NULL);
        return;
    }
    r->session_id = bt_xstrdup(id);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_SESSION_STARTED);
    ev.native_session_id = r->session_id;
    ev.resumed = asked != NULL;
    sink->event(sink->data, &ev);
    if (r->cfg->model && r->profile->model_option) {
        cJSON *params;
        cJSON *m = request(r, BT_ACP_ID_MODEL, "session/set_config_option", &params);
        cJSON_AddStringToObject(params, "sessionId", r->session_id);
        cJSON_AddStringToObject(params, "configId", r->profile->model_option);
        cJSON_AddStringToObject(params, "value", r->cfg->model);
        bt_runner_put_json(out, m);
        return;
    }
    send_prompt(r, out);
}

/* The model's config option was set, or the agent refused the model. */
static void on_model(struct acp_runner *r, const struct bt_signal_response *sig, struct bt_buf *out,
                     const struct bt_parser_sink *sink)
{
    if (sig->is_error) {
        fail(r, sink, BT_ERROR_KIND_MODEL_ERROR, "could not select the model", sig->error_message);
        return;
    }
    send_prompt(r, out);
}

static void on_response(struct acp_runner *r, const struct bt_signal_response *sig,
                        struct bt_buf *out, const struct bt_parser_sink *sink)
{
    if (!bt_runner_ids_first_response(&r->ids, sig->id, BT_ACP_ID_INITIALIZE, BT_ACP_ID_MODEL))
        return; /* the parser warned of it */
    if (sig->id == BT_ACP_ID_INITIALIZE)
        on_initialize(r, sig, out, sink);
    else if (sig->id == BT_ACP_ID_SESSION)
        on_session(r, sig, out, sink);
    else if (sig->id == BT_ACP_ID_MODEL)
        on_model(r, sig, out, sink);
}

/* The optionId of the first offered option of this kind (PermissionOption
 * {optionId, name, kind}), or NULL. Borrowed from opts. */
static const char *option_of(const cJSON *opts, const char *kind)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, opts)
    {
        const char *k = bt_json_str(o, "kind");
        const char *id = bt_json_str(o, "optionId");
        if (k && id && strcmp(k, kind) == 0)
            return id;
    }
    return NULL;
}

/* session/request_permission answered as decided (runner.h): accepted
 * selects allow_once, declined a reject_once (else reject_always: it only
 * keeps refusing), declined because the turn is being stopped answers
 * outcome cancelled (prompt-turn, "Cancellation"). Never allow_always: it
 * would change what the agent asks next time. */
static void answer_permission(const struct bt_signal_request *sig,
                              const struct bt_runner_decision *d, struct bt_buf *out,
                              const struct bt_parser_sink *sink)
{
    cJSON *opts = sig->params_json ? cJSON_Parse(sig->params_json) : NULL;
    int accept = d->accept;
    const char *option = NULL;
    if (strcmp(d->by, "cancel") != 0) {
        option = accept ? option_of(opts, "allow_once") : option_of(opts, "reject_once");
        if (!option && !accept)
            option = option_of(opts, "reject_always");
        if (!option)
            bt_parser_warn(sink, "protocol",
                           accept ? "the agent offered no allow_once option; the request is "
                                    "declined"
                                  : "the agent offered no reject option; the request is cancelled",
                           NULL, 0);
        if (!option && accept) {
            accept = 0;
            option = option_of(opts, "reject_once");
        }
    }
    cJSON *result = cJSON_CreateObject();
    cJSON *outcome = cJSON_AddObjectToObject(result, "outcome");
    cJSON_AddStringToObject(outcome, "outcome", option ? "selected" : "cancelled");
    if (option)
        cJSON_AddStringToObject(outcome, "optionId", option);
    cJSON_Delete(opts);
    bt_runner_answer(sig, "2.0", result, out);
    bt_runner_resolved(sink, sig, accept && option, d);
}

/* elicitation/create answered (CreateElicitationResponse {action,
 * content?} of @agentclientprotocol/sdk 2.4.0): a form's content typed to
 * its requestedSchema (runner-form.c), declined, or cancelled after the
 * stop. */
static void answer_elicitation(const struct bt_signal_request *sig,
                               const struct bt_runner_decision *d, struct bt_buf *out,
                               const struct bt_parser_sink *sink)
{
    cJSON *result = cJSON_CreateObject();
    int accept = bt_runner_form_answer(sig, d, result, sink);
    bt_runner_answer(sig, "2.0", result, out);
    bt_runner_resolved(sink, sig, accept, d);
}

char *bt_acp_runner_answer_problem(const struct bt_signal_request *rq, const char *answers_json)
{
    if (strcmp(rq->method, "elicitation/create") != 0)
        return NULL;
    return bt_runner_form_problem(rq, answers_json);
}

void bt_acp_runner_answer(void *st, const struct bt_signal_request *sig,
                          const struct bt_runner_decision *d, struct bt_buf *out,
                          const struct bt_parser_sink *sink)
{
    (void)st;
    if (bt_runner_is_question(sig))
        answer_elicitation(sig, d, out, sink);
    else
        answer_permission(sig, d, out, sink);
}

/* A request by policy: never counts as auto (the agent cannot be told not
 * to ask, so it is not refused); a request after session/cancel was
 * written is the stop's. */
static void on_decide(struct acp_runner *r, const struct bt_signal_request *sig, struct bt_buf *out,
                      const struct bt_parser_sink *sink)
{
    struct bt_runner_config policy = *r->cfg;
    if (policy.approval == BT_APPROVAL_NEVER)
        policy.approval = BT_APPROVAL_AUTO;
    struct bt_signal_request rq = *sig;
    rq.stopping |= r->cancelled; /* session/cancel written: the engine began stopping */
    struct bt_runner_decision d;
    bt_runner_policy(&policy, &rq, &d);
    bt_acp_runner_answer(r, sig, &d, out, sink);
}

static void on_request(struct acp_runner *r, const struct bt_signal_request *sig,
                       struct bt_buf *out, const struct bt_parser_sink *sink)
{
    if (sig->approval_kind) {
        on_decide(r, sig, out, sink);
        return;
    }
    /* fs and terminal methods (not advertised) and any other: an answer, so
     * the agent does not wait for one */
    bt_parser_warn(sink, "unsupported_request", "the agent asked for something baton cannot answer",
                   sig->method, strlen(sig->method));
    bt_runner_answer_error(sig, "2.0", -32601, "method not supported by this client", out);
}

void bt_acp_runner_on_signal(void *st, const struct bt_signal *sig, struct bt_buf *out,
                             const struct bt_parser_sink *sink)
{
    struct acp_runner *r = st;
    if (sig->type == BT_SIGNAL_RESPONSE)
        on_response(r, &sig->response, out, sink);
    else if (sig->type == BT_SIGNAL_REQUEST)
        on_request(r, &sig->request, out, sink);
}

int bt_acp_runner_interrupt(void *st, struct bt_buf *out)
{
    struct acp_runner *r = st;
    if (!r->prompted || r->cancelled)
        return -ENOTSUP;
    cJSON *params;
    cJSON *m = message("session/cancel", &params);
    cJSON_AddStringToObject(params, "sessionId", r->session_id);
    bt_runner_put_json(out, m);
    r->cancelled = 1;
    return 0;
}
