/* SPDX-License-Identifier: MIT */
/*
 * ACP parser: maps an ACP agent's JSON-RPC lines to normalized events and
 * to signals for the ACP runner. The protocol source and the routing:
 * parser-acp.h; the mapping tables: docs/acp.md. Error kinds and the
 * diagnosis of an early exit: parser-acp-error.c.
 */
#include "parser-acp.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "parser-acp-tool.h"
#include "parser-form.h"
#include "runner-acp.h"

/* Tool calls remembered for their updates, which name only the id: a turn
 * with more open at once is not credible; the oldest is forgotten. */
#define ACP_MAX_TOOLS 64

struct acp_parser {
    const struct bt_acp_profile *profile; /* first: bt_acp_parser_diagnose reads it */
    int session_ready;                    /* the response to the session request came */
    unsigned answered;                    /* bit per runner request id whose response came */
    enum bt_item_kind open_kind;          /* message or reasoning being streamed; OTHER: none */
    char *open_id;                        /* its item id */
    struct bt_buf open_text;              /* its text so far */
    unsigned items;                       /* counter for item ids the agent does not give */
    struct acp_tool tools[ACP_MAX_TOOLS];
    size_t ntools;
    struct bt_usage usage;
    int usage_seen;
    int output; /* the turn showed something: text, reasoning, a tool call, a plan */
    /* prose_errors: a chunk "Error: …" held back until what follows says
     * whether it was a failure (the turn ends without usage) or an answer;
     * or a chunk "Info: …" that starts no message, a notice unless more
     * message text follows. */
    enum { HELD_NONE, HELD_ERROR, HELD_INFO } held;
    char *held_id; /* its messageId, NULL when none */
    struct bt_buf held_text;
};

void *bt_acp_parser_create(const struct bt_acp_profile *p)
{
    struct acp_parser *a = bt_xcalloc(1, sizeof(*a));
    a->profile = p;
    a->open_kind = BT_ITEM_OTHER;
    bt_buf_init(&a->open_text);
    bt_buf_init(&a->held_text);
    bt_usage_init(&a->usage);
    return a;
}

static void tool_release(struct acp_tool *t)
{
    free(t->id);
    free(t->title);
    free(t->command);
    memset(t, 0, sizeof(*t));
}

void bt_acp_parser_destroy(void *st)
{
    struct acp_parser *a = st;
    if (!a)
        return;
    free(a->open_id);
    bt_buf_release(&a->open_text);
    free(a->held_id);
    bt_buf_release(&a->held_text);
    for (size_t i = 0; i < a->ntools; i++)
        tool_release(&a->tools[i]);
    free(a);
}

static void emit(const struct bt_parser_sink *sink, const struct bt_event *ev)
{
    sink->event(sink->data, ev);
}

static void emit_output(struct acp_parser *a, const struct bt_parser_sink *sink,
                        const struct bt_event *ev)
{
    a->output = 1;
    emit(sink, ev);
}

/* ---- streamed message and reasoning ----------------------------------- */

/* The message or reasoning being streamed is complete: another kind of
 * update came, or the turn ended. */
static void close_open(struct acp_parser *a, const struct bt_parser_sink *sink)
{
    if (a->open_kind == BT_ITEM_OTHER)
        return;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
    ev.item.id = a->open_id;
    ev.item.kind = a->open_kind;
    ev.item.status = "completed";
    ev.item.text = a->open_text.data;
    ev.item.text_len = a->open_text.len;
    emit(sink, &ev);
    a->open_kind = BT_ITEM_OTHER;
    free(a->open_id);
    a->open_id = NULL;
    bt_buf_reset(&a->open_text);
}

/* One chunk of text for the message or reasoning item being streamed; a
 * change of kind or messageId starts a new item. */
static void chunk_text(struct acp_parser *a, enum bt_item_kind kind, const char *mid,
                       const char *text, const struct bt_parser_sink *sink)
{
    if (a->open_kind != kind || (mid && a->open_id && strcmp(mid, a->open_id) != 0))
        close_open(a, sink);
    if (a->open_kind == BT_ITEM_OTHER) {
        a->open_kind = kind;
        a->open_id =
            mid ? bt_xstrdup(mid)
                : bt_xasprintf("%s-%u", kind == BT_ITEM_MESSAGE ? "msg" : "thought", ++a->items);
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_ITEM_STARTED);
        ev.item.id = a->open_id;
        ev.item.kind = kind;
        ev.item.status = "in_progress";
        emit_output(a, sink, &ev);
    }
    bt_buf_adds(&a->open_text, text);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
    ev.item.id = a->open_id;
    ev.item.kind = kind;
    ev.delta = text;
    ev.delta_len = strlen(text);
    emit(sink, &ev);
}

/* What a held chunk was, now that the next message chunk (as_text) or
 * something else came: an "Error: …" chunk is answer text either way (a
 * failure ends the turn without usage, end_with_prose), an "Info: …" one
 * text only when the message goes on, else copilot's notice. */
static void flush_held(struct acp_parser *a, const struct bt_parser_sink *sink, int as_text)
{
    if (a->held == HELD_NONE)
        return;
    const char *text = a->held_text.data ? a->held_text.data : "";
    if (a->held == HELD_INFO && !as_text) {
        const char *notice = text + strlen("Info: ");
        bt_parser_warn(sink, "coder", notice, text, strlen(text));
    } else {
        chunk_text(a, BT_ITEM_MESSAGE, a->held_id, text, sink);
    }
    a->held = HELD_NONE;
    free(a->held_id);
    a->held_id = NULL;
    bt_buf_reset(&a->held_text);
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* prose_errors: a whole chunk "Info: … Retrying..." is copilot's notice of
 * a retried model request, not answer text. 1 if text was one. */
static int prose_retry(struct acp_parser *a, const char *text, const struct bt_parser_sink *sink)
{
    if (!starts_with(text, "Info: ") || !ends_with(text, "Retrying..."))
        return 0;
    enum bt_error_kind kind = bt_acp_text_kind(a->profile, text);
    const char *msg = text + strlen("Info: ");
    struct bt_signal sig = {
        .type = BT_SIGNAL_RETRY,
        .retry = {.error_kind = kind ? kind : BT_ERROR_KIND_MODEL_ERROR, .message = msg}};
    bt_parser_warn(sink, "retry", msg, text, strlen(text));
    sink->signal(sink->data, &sig);
    return 1;
}

/* agent_message_chunk, agent_thought_chunk: a ContentChunk {content,
 * messageId?}. Text blocks only. */
static void on_chunk(struct acp_parser *a, const cJSON *u, enum bt_item_kind kind,
                     const struct bt_parser_sink *sink)
{
    const cJSON *content = bt_json_obj(u, "content");
    const char *type = content ? bt_json_str(content, "type") : NULL;
    const char *text = content ? bt_json_str(content, "text") : NULL;
    if (!type || strcmp(type, "text") != 0 || !text) {
        bt_parser_warn(sink, "unknown_item", "an ACP content block baton does not show", type,
                       type ? strlen(type) : 0);
        return;
    }
    const char *mid = bt_json_str(u, "messageId");
    if (a->profile->prose_errors && kind == BT_ITEM_MESSAGE) {
        if (prose_retry(a, text, sink))
            return;
        int info = a->open_kind != BT_ITEM_MESSAGE && starts_with(text, "Info: ");
        if (a->held == HELD_NONE && (info || starts_with(text, "Error: "))) {
            a->held = info ? HELD_INFO : HELD_ERROR;
            a->held_id = mid ? bt_xstrdup(mid) : NULL;
            bt_buf_adds(&a->held_text, text);
            return;
        }
    }
    flush_held(a, sink, kind == BT_ITEM_MESSAGE);
    chunk_text(a, kind, mid, text, sink);
}

/* ---- tool calls ------------------------------------------------------- */

static struct acp_tool *tool_find(struct acp_parser *a, const char *id)
{
    for (size_t i = 0; i < a->ntools; i++)
        if (strcmp(a->tools[i].id, id) == 0)
            return &a->tools[i];
    return NULL;
}

static void tool_forget(struct acp_parser *a, struct acp_tool *t)
{
    size_t i = (size_t)(t - a->tools);
    tool_release(t);
    memmove(&a->tools[i], &a->tools[i + 1], (a->ntools - i - 1) * sizeof(*t));
    a->ntools--;
    memset(&a->tools[a->ntools], 0, sizeof(*t));
}

static struct acp_tool *tool_add(struct acp_parser *a, const char *id)
{
    if (a->ntools == ACP_MAX_TOOLS)
        tool_forget(a, &a->tools[0]);
    struct acp_tool *t = &a->tools[a->ntools++];
    t->id = bt_xstrdup(id);
    t->kind = BT_ITEM_TOOL_CALL;
    return t;
}

/* tool_call (started) and tool_call_update (completed when its status is
 * final; otherwise progress, or started for a call not seen before). */
static void on_tool(struct acp_parser *a, const cJSON *u, int update,
                    const struct bt_parser_sink *sink, const char *raw, size_t raw_len)
{
    const char *id = bt_json_str(u, "toolCallId");
    if (!id) {
        bt_parser_warn(sink, "protocol", "an ACP tool call without toolCallId", raw, raw_len);
        return;
    }
    flush_held(a, sink, 0);
    close_open(a, sink);
    struct acp_tool *t = tool_find(a, id);
    int known = t != NULL;
    if (!t)
        t = tool_add(a, id);
    bt_acp_tool_learn(t, u);
    int final;
    const char *status = bt_acp_tool_item_status(bt_json_str(u, "status"), &final);
    if (update && known && !final) {
        struct bt_signal sig = {.type = BT_SIGNAL_PROGRESS};
        sink->signal(sink->data, &sig);
        return;
    }
    struct bt_event ev;
    bt_event_init(&ev, final ? BT_EVENT_ITEM_COMPLETED : BT_EVENT_ITEM_STARTED);
    ev.item.id = t->id;
    ev.item.kind = t->kind;
    ev.item.status = status;
    struct bt_buf text = BT_BUF_INIT;
    bt_acp_content_text(cJSON_GetObjectItemCaseSensitive(u, "content"), &text);
    if (text.len) {
        ev.item.text = text.data;
        ev.item.text_len = text.len;
    }
    if (t->kind == BT_ITEM_COMMAND)
        ev.item.command = t->command ? t->command : t->title;
    else
        ev.item.name = t->title;
    char *detail = bt_acp_tool_detail(u);
    char *changes = bt_acp_tool_changes(cJSON_GetObjectItemCaseSensitive(u, "content"));
    ev.item.detail_json = detail;
    ev.item.changes_json = t->kind == BT_ITEM_FILE_CHANGE ? changes : NULL;
    emit_output(a, sink, &ev);
    cJSON_free(detail);
    cJSON_free(changes);
    bt_buf_release(&text);
    if (final)
        tool_forget(a, t);
}

/* ---- plan and usage --------------------------------------------------- */

/* plan {entries:[{content, priority, status}]}: the whole plan each time,
 * one line per entry. */
static void on_plan(struct acp_parser *a, const cJSON *u, const struct bt_parser_sink *sink)
{
    flush_held(a, sink, 0);
    close_open(a, sink);
    struct bt_buf text = BT_BUF_INIT;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(u, "entries"))
    {
        const char *content = bt_json_str(e, "content");
        const char *status = bt_json_str(e, "status");
        if (!content)
            continue;
        bt_buf_addf(&text, "%s[%s] %s", text.len ? "\n" : "", status ? status : "pending", content);
    }
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
    ev.item.id = "plan";
    ev.item.kind = BT_ITEM_PLAN;
    ev.item.status = "completed";
    ev.item.text = text.data;
    ev.item.text_len = text.len;
    emit_output(a, sink, &ev);
    bt_buf_release(&text);
}

static void emit_usage(struct acp_parser *a, const struct bt_parser_sink *sink)
{
    a->usage_seen = 1;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage = a->usage;
    emit(sink, &ev);
}

/* usage_update {used, size, cost?{amount, currency}}: the context in use
 * and the window; a cost only in USD. */
static void on_usage_update(struct acp_parser *a, const cJSON *u, const struct bt_parser_sink *sink)
{
    a->usage.context_tokens = bt_json_count(u, "used");
    a->usage.context_window = bt_json_count(u, "size");
    const cJSON *cost = bt_json_obj(u, "cost");
    const cJSON *amount = cost ? cJSON_GetObjectItemCaseSensitive(cost, "amount") : NULL;
    const char *currency = cost ? bt_json_str(cost, "currency") : NULL;
    if (amount && cJSON_IsNumber(amount) && amount->valuedouble >= 0 && currency &&
        strcmp(currency, "USD") == 0)
        a->usage.cost_usd = amount->valuedouble;
    emit_usage(a, sink);
}

/* PromptResponse.usage (schema.unstable.json, Usage): the turn's tokens. */
static void on_prompt_usage(struct acp_parser *a, const cJSON *u, const struct bt_parser_sink *sink)
{
    a->usage.input_tokens = bt_json_count(u, "inputTokens");
    a->usage.output_tokens = bt_json_count(u, "outputTokens");
    a->usage.reasoning_tokens = bt_json_count(u, "thoughtTokens");
    a->usage.cached_input_tokens = bt_json_count(u, "cachedReadTokens");
    emit_usage(a, sink);
}

/* ---- session/update --------------------------------------------------- */

/* Update kinds that carry nothing for the event stream: the agent's
 * commands, modes, options, title, the echo of the user's own prompt. */
static const char *const ignored_updates[] = {
    "user_message_chunk",   "available_commands_update", "current_mode_update",
    "config_option_update", "session_info_update",
};

static void on_update(struct acp_parser *a, const cJSON *params, const struct bt_parser_sink *sink,
                      const char *raw, size_t raw_len)
{
    const cJSON *u = params ? bt_json_obj(params, "update") : NULL;
    const char *kind = u ? bt_json_str(u, "sessionUpdate") : NULL;
    if (!kind) {
        bt_parser_warn(sink, "protocol", "an ACP session/update without sessionUpdate", raw,
                       raw_len);
        return;
    }
    if (!a->session_ready) {
        return; /* history replayed by session/load, not new output */
    }
    if (strcmp(kind, "agent_message_chunk") == 0)
        on_chunk(a, u, BT_ITEM_MESSAGE, sink);
    else if (strcmp(kind, "agent_thought_chunk") == 0)
        on_chunk(a, u, BT_ITEM_REASONING, sink);
    else if (strcmp(kind, "tool_call") == 0)
        on_tool(a, u, 0, sink, raw, raw_len);
    else if (strcmp(kind, "tool_call_update") == 0)
        on_tool(a, u, 1, sink, raw, raw_len);
    else if (strcmp(kind, "plan") == 0)
        on_plan(a, u, sink);
    else if (strcmp(kind, "usage_update") == 0)
        on_usage_update(a, u, sink);
    else {
        for (size_t i = 0; i < BT_ARRAY_SIZE(ignored_updates); i++)
            if (strcmp(ignored_updates[i], kind) == 0)
                return;
        bt_parser_warn(sink, "unknown_method", "an ACP session update kind baton does not know",
                       raw, raw_len);
    }
}

/* ---- requests from the agent ------------------------------------------ */

/* The approval kind of a permission request, from its tool call's kind
 * (the update it carries, or the tool call seen before). */
static const char *approval_kind(struct acp_parser *a, const cJSON *tc)
{
    const char *k = tc ? bt_json_str(tc, "kind") : NULL;
    const char *id = tc ? bt_json_str(tc, "toolCallId") : NULL;
    struct acp_tool *t = id ? tool_find(a, id) : NULL;
    enum bt_item_kind kind = k ? bt_acp_tool_item_kind(k) : t ? t->kind : BT_ITEM_TOOL_CALL;
    return kind == BT_ITEM_COMMAND       ? "command"
           : kind == BT_ITEM_FILE_CHANGE ? "file_change"
                                         : "other";
}

static void on_request(struct acp_parser *a, const cJSON *msg, const char *method,
                       const struct bt_parser_sink *sink)
{
    flush_held(a, sink, 0);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(msg, "id"));
    const cJSON *params = bt_json_obj(msg, "params");
    struct bt_signal sig = {.type = BT_SIGNAL_REQUEST,
                            .request = {.request_id = id, .method = method}};
    struct bt_signal_request *rq = &sig.request;
    char *options = NULL, *form = NULL;
    if (strcmp(method, "session/request_permission") == 0) {
        close_open(a, sink);
        const cJSON *tc = params ? bt_json_obj(params, "toolCall") : NULL;
        const char *tid = tc ? bt_json_str(tc, "toolCallId") : NULL;
        struct acp_tool *t = tid ? tool_find(a, tid) : NULL;
        const char *title = tc ? bt_json_str(tc, "title") : NULL;
        if (!title && t)
            title = t->command ? t->command : t->title;
        rq->approval_kind = approval_kind(a, tc);
        rq->summary = title ? title : method;
        rq->item_id = tid;
        const cJSON *opts = params ? cJSON_GetObjectItemCaseSensitive(params, "options") : NULL;
        rq->params_json = options = cJSON_IsArray(opts) ? cJSON_PrintUnformatted(opts) : NULL;
        bt_parser_approval(sink, rq, NULL, NULL);
    } else if (strcmp(method, "elicitation/create") == 0) {
        /* the agent asks the user (CreateElicitationRequest {message, mode}
         * of @agentclientprotocol/sdk 2.4.0, schema v1; requestedSchema in
         * form mode): questions, although baton advertises no elicitation
         * capability */
        const char *message = params ? bt_json_str(params, "message") : NULL;
        const cJSON *schema = params ? bt_json_obj(params, "requestedSchema") : NULL;
        cJSON *qs = NULL;
        /* a form: a question per field, the schema kept for the answer
         * (parser-form.h); else (a URL, a form baton cannot fill) the
         * message, which can only be declined */
        if (bt_form_questions(&qs, schema, message))
            rq->params_json = form = cJSON_PrintUnformatted(schema);
        else
            bt_parser_question(&qs, NULL, NULL, message ? message : method, NULL, 0);
        rq->approval_kind = "user_input";
        rq->summary = message ? message : method;
        rq->questions_json = options = bt_parser_changes_text(qs);
        bt_parser_approval(sink, rq, NULL, NULL);
    } else {
        rq->summary = method;
    }
    sink->signal(sink->data, &sig);
    cJSON_free(options);
    cJSON_free(form);
    cJSON_free(id);
}

/* ---- responses and the end of the turn ------------------------------- */

/* stopReason -> status (StopReason, schema.json): end_turn completed,
 * cancelled cancelled; max_tokens, max_turn_requests and refusal fail
 * with their own message. */
static void end_with_stop(struct acp_parser *a, const char *stop, const struct bt_parser_sink *sink)
{
    static const struct {
        const char *reason;
        enum bt_turn_status status;
        const char *message;
    } map[] = {
        {"end_turn", BT_TURN_COMPLETED, NULL},
        {"cancelled", BT_TURN_CANCELLED, NULL},
        {"max_tokens", BT_TURN_FAILED, "the model stopped at its output token limit (max_tokens)"},
        {"max_turn_requests", BT_TURN_FAILED,
         "the agent stopped at its limit of model requests in one turn (max_turn_requests)"},
        {"refusal", BT_TURN_FAILED, "the model refused to answer (refusal)"},
    };
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END, .turn_end = {.drain = 1}};
    struct bt_signal_turn_end *end = &sig.turn_end;
    size_t i = 0;
    while (i < BT_ARRAY_SIZE(map) && (!stop || strcmp(map[i].reason, stop) != 0))
        i++;
    if (i < BT_ARRAY_SIZE(map) && map[i].status == BT_TURN_COMPLETED && !a->output) {
        /* gemini-cli 0.61.0 ends a turn whose model stream it found invalid
         * (no text, no finish reason, blocked by safety: InvalidStreamError)
         * with end_turn and nothing else; a model that answers says
         * something. Its stderr may say why (bt_acp_parser_explain). */
        end->status = BT_TURN_FAILED;
        end->error_kind = BT_ERROR_KIND_MODEL_ERROR;
        end->message = "it ended the turn without any answer, tool call or reason (an "
                       "empty, blocked or malformed model response)";
        end->unexplained = 1;
    } else if (i < BT_ARRAY_SIZE(map)) {
        end->status = map[i].status;
        end->error_kind = end->status == BT_TURN_FAILED ? BT_ERROR_KIND_MODEL_ERROR : 0;
        end->message = map[i].message;
    } else {
        bt_parser_warn(sink, "unknown_status", "an ACP stopReason baton does not know", stop,
                       stop ? strlen(stop) : 0);
        end->status = BT_TURN_FAILED;
        end->error_kind = BT_ERROR_KIND_PROTOCOL_MISMATCH;
        end->message = "the agent ended the turn with a stop reason baton does not know";
    }
    sink->signal(sink->data, &sig);
}

/* An error answer to session/prompt: the turn failed, with the agent's
 * message and a kind from its code and text; never its prose as an answer. */
static void end_with_error(struct acp_parser *a, const cJSON *err,
                           const struct bt_parser_sink *sink)
{
    const char *m = bt_json_str(err, "message");
    /* gemini and opencode pass the model API's error body on in the
     * message: its message says it without the JSON */
    char *said = bt_json_error_text(m);
    struct bt_buf msg = BT_BUF_INIT;
    bt_buf_adds(&msg, said ? said : m ? m : "the agent gave no reason");
    free(said);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(err, "data");
    const char *details = cJSON_IsString(data) ? data->valuestring
                          : data               ? bt_json_str(data, "details")
                                               : NULL;
    if (details && (!m || !strstr(m, details)))
        bt_buf_addf(&msg, " (%s)", details);
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END, .turn_end = {.drain = 1}};
    sig.turn_end.status = bt_json_int(err, "code") == -32800 ? BT_TURN_CANCELLED : BT_TURN_FAILED;
    if (sig.turn_end.status == BT_TURN_FAILED) {
        sig.turn_end.error_kind = bt_acp_error_kind(a->profile, err);
        sig.turn_end.message = sig.turn_end.error_kind == BT_ERROR_KIND_AUTH_REQUIRED
                                   ? a->profile->auth_message
                                   : msg.data;
    }
    sink->signal(sink->data, &sig);
    bt_buf_release(&msg);
}

/* prose_errors: the held "Error: …" chunk was the last text and the turn
 * ended without usage, which copilot's successful turns always have: the
 * model request failed. The message is copilot's sentence; the kind from
 * its words (HTTP 401/403, 429, context, connection), else model_error. */
static void end_with_prose(struct acp_parser *a, const struct bt_parser_sink *sink)
{
    const char *text = a->held_text.data + strlen("Error: ");
    enum bt_error_kind kind = bt_acp_text_kind(a->profile, text);
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END, .turn_end = {.drain = 1}};
    sig.turn_end.status = BT_TURN_FAILED;
    sig.turn_end.error_kind = kind ? kind : BT_ERROR_KIND_MODEL_ERROR;
    sig.turn_end.message = text;
    sink->signal(sink->data, &sig);
    a->held = HELD_NONE;
}

static void on_response(struct acp_parser *a, const cJSON *msg, const struct bt_parser_sink *sink,
                        const char *raw, size_t raw_len)
{
    int64_t id = bt_json_int_of(cJSON_GetObjectItemCaseSensitive(msg, "id"));
    if (id < BT_ACP_ID_INITIALIZE || id > BT_ACP_ID_MODEL || (a->answered & (1u << id))) {
        bt_parser_warn(sink, "protocol", "the agent answered a request that was not pending", raw,
                       raw_len);
        return;
    }
    a->answered |= 1u << id;
    const cJSON *err = bt_json_obj(msg, "error");
    const cJSON *res = bt_json_obj(msg, "result");
    if (id == BT_ACP_ID_PROMPT) {
        const cJSON *usage = res ? bt_json_obj(res, "usage") : NULL;
        const char *stop = res ? bt_json_str(res, "stopReason") : NULL;
        if (a->held == HELD_ERROR && res && !usage && stop && strcmp(stop, "end_turn") == 0) {
            close_open(a, sink);
            end_with_prose(a, sink);
            return;
        }
        /* the message stays open: its tail may come after the answer,
         * while the end drains (turn_end.drain); finish closes it */
        flush_held(a, sink, 0);
        if (usage)
            on_prompt_usage(a, usage, sink);
        if (err || !res)
            end_with_error(a, err, sink);
        else
            end_with_stop(a, stop, sink);
        return;
    }
    if (id == BT_ACP_ID_SESSION)
        a->session_ready = 1;
    struct bt_signal sig = {.type = BT_SIGNAL_RESPONSE};
    struct bt_signal_response *rs = &sig.response;
    rs->id = id;
    /* JSON-RPC 2.0 lets a result be any value, null included: an agent
     * that answers session/load or session/resume with `null` loaded it.
     * Only an error, or no result member at all, is a failure. */
    rs->is_error = err || !cJSON_GetObjectItemCaseSensitive(msg, "result");
    rs->error_code = err ? bt_json_int(err, "code") : 0;
    rs->error_message = err ? bt_json_str(err, "message") : NULL;
    rs->session_id = res ? bt_json_str(res, "sessionId") : NULL;
    char *rj = res ? cJSON_PrintUnformatted(res) : NULL;
    rs->result_json = rj;
    sink->signal(sink->data, &sig);
    cJSON_free(rj);
}

void bt_acp_parser_finish(void *st, const struct bt_parser_sink *sink)
{
    struct acp_parser *a = st;
    flush_held(a, sink, 0); /* the agent left with a chunk held: it is not lost */
    close_open(a, sink);
}

void bt_acp_parser_line(void *st, char *line, size_t len, const struct bt_parser_sink *sink)
{
    struct acp_parser *a = st;
    cJSON *msg = bt_parser_json_line(line, len, "the agent", sink);
    if (!msg)
        return;
    const char *method = bt_json_str(msg, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    if (method && id)
        on_request(a, msg, method, sink);
    else if (method && strcmp(method, "session/update") == 0)
        on_update(a, bt_json_obj(msg, "params"), sink, line, len);
    else if (method)
        bt_parser_warn(sink, "unknown_method", "an ACP notification baton does not know", line,
                       len);
    else if (id)
        on_response(a, msg, sink, line, len);
    else
        bt_parser_warn(sink, "protocol", "an ACP message without method or id", line, len);
    cJSON_Delete(msg);
}
