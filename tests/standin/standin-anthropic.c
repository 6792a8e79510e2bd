/* SPDX-License-Identifier: MIT */
/*
 * The Anthropic Messages API of baton-standin, as Claude Code 2.1.332 uses it:
 * POST /v1/messages (claude adds "?beta=true", which the server's routing
 * ignores with the rest of the query) and POST /v1/messages/count_tokens.
 *
 * Shapes follow the public Messages streaming reference
 * (docs.anthropic.com, "Streaming Messages"): event message_start (message
 * with usage), ping, per content block content_block_start / _delta /
 * _stop (text_delta, thinking_delta + signature_delta, input_json_delta for
 * tool_use), message_delta (stop_reason, usage), message_stop. Errors are
 * {"type":"error","error":{"type","message"}}, as an HTTP body or as an SSE
 * "error" event mid-stream. A request without "stream":true gets the whole
 * message as one JSON body (claude's side requests, e.g. titles).
 *
 * The script is the shared one (script_answer) with claude's tool names:
 * Bash {"command"}, Write {"file_path","content"}. A tool_result in the last
 * user message continues the script ("Tool output: <first line>"), as a
 * function_call_output does for codex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

/* claude 2.1.332's built-in tools: Bash {"command"}, Write {"file_path"}. */
static const struct dialect claude_dialect = {"Bash", "command", "Write", false, "file_path", NULL};

/* ---- the prompt of a Messages request ----------------------------------- */

static bool type_is(const cJSON *block, const char *type)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(block, "type");
    return cJSON_IsString(t) && strcmp(t->valuestring, type) == 0;
}

/* claude adds context to the user's turn as separate text blocks wrapped in
 * <system-reminder>; they are not what the user typed. */
static bool is_reminder(const char *text)
{
    return strncmp(text, "<system-reminder>", strlen("<system-reminder>")) == 0;
}

/* The typed text of a user message's content (string or blocks): its text
 * blocks but the reminders, joined; all of them if only reminders. */
static void user_text(const cJSON *content, struct sbuf *out)
{
    const cJSON *block;
    if (cJSON_IsString(content)) {
        sbuf_adds(out, content->valuestring);
        return;
    }
    for (int pass = 0; pass < 2 && out->len == 0; pass++) {
        cJSON_ArrayForEach(block, content)
        {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(block, "text");
            if (type_is(block, "text") && cJSON_IsString(t) &&
                (pass || !is_reminder(t->valuestring)))
                sbuf_adds(out, t->valuestring);
        }
    }
}

/* The content of the last tool_result block of a user message, or NULL. */
static char *tool_result(const cJSON *content)
{
    const cJSON *block;
    const cJSON *blocks = cJSON_IsArray(content) ? content : NULL;
    char *found = NULL;
    cJSON_ArrayForEach(block, blocks)
    {
        if (!type_is(block, "tool_result"))
            continue;
        struct sbuf out = {0};
        content_text(cJSON_GetObjectItemCaseSensitive(block, "content"), &out);
        free(found);
        found = sbuf_detach(&out);
    }
    return found;
}

/* The last user message that is not only tool results gives the prompt; a
 * tool result in a user message after it gives the tool output. */
static void messages_prompt(const cJSON *req, struct prompt *p)
{
    const cJSON *msg;
    struct sbuf user = {0};
    *p = (struct prompt){0};
    cJSON_ArrayForEach(msg, cJSON_GetObjectItemCaseSensitive(req, "messages"))
    {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
        if (!cJSON_IsString(role) || strcmp(role->valuestring, "user") != 0)
            continue;
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
        char *out = tool_result(content);
        if (out) {
            free(p->tool_output);
            p->tool_output = out;
            continue;
        }
        user.len = 0;
        if (user.data)
            user.data[0] = '\0';
        user_text(content, &user);
        free(p->tool_output);
        p->tool_output = NULL;
    }
    p->user = sbuf_detach(&user);
}

/* ---- the encoder --------------------------------------------------------- */

struct msg {
    struct stream *out; /* frames produced */
    unsigned long id;   /* request number, used in every id */
    int index;          /* index of the next content block */
};

/* Append `ev` (consumed) as one SSE frame named after its "type". */
static void msg_emit(struct msg *m, cJSON *ev, unsigned delay_ms)
{
    sse_emit(m->out, true, ev, "\n", delay_ms);
}

static cJSON *event(const char *type)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", type);
    return ev;
}

/* Anthropic usage: input_tokens excludes the cache reads, which are counted
 * apart; output_tokens includes the thinking. */
static cJSON *usage_json(size_t body_len, const struct answer *a, bool started)
{
    struct usage n = usage_of(body_len, a);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "input_tokens", n.input - n.cached);
    cJSON_AddNumberToObject(u, "cache_creation_input_tokens", 0);
    cJSON_AddNumberToObject(u, "cache_read_input_tokens", n.cached);
    cJSON_AddNumberToObject(u, "output_tokens", started ? 1 : n.output);
    return u;
}

static const char *stop_reason(const struct answer *a)
{
    return a->kind == ANSWER_TOOL_CALL ? "tool_use" : "end_turn";
}

static cJSON *message_json(const struct msg *m, const char *model)
{
    char id[48];
    snprintf(id, sizeof id, "msg_standin_%lu", m->id);
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "id", id);
    cJSON_AddStringToObject(msg, "type", "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    cJSON_AddStringToObject(msg, "model", model);
    cJSON_AddItemToObject(msg, "content", cJSON_CreateArray());
    cJSON_AddNullToObject(msg, "stop_reason");
    cJSON_AddNullToObject(msg, "stop_sequence");
    return msg;
}

static void block_start(struct msg *m, cJSON *block)
{
    cJSON *ev = event("content_block_start");
    cJSON_AddNumberToObject(ev, "index", m->index);
    cJSON_AddItemToObject(ev, "content_block", block);
    msg_emit(m, ev, 0);
}

/* content_block_delta with delta {type, key: value}. */
static void block_delta(struct msg *m, const char *type, const char *key, const char *value,
                        unsigned delay_ms)
{
    cJSON *ev = event("content_block_delta");
    cJSON_AddNumberToObject(ev, "index", m->index);
    cJSON *d = cJSON_AddObjectToObject(ev, "delta");
    cJSON_AddStringToObject(d, "type", type);
    cJSON_AddStringToObject(d, key, value);
    msg_emit(m, ev, delay_ms);
}

static void block_stop(struct msg *m)
{
    cJSON *ev = event("content_block_stop");
    cJSON_AddNumberToObject(ev, "index", m->index++);
    msg_emit(m, ev, 0);
}

static void block_deltas(struct msg *m, const char *type, const char *key, const char *text,
                         size_t chunk, unsigned delay_ms)
{
    for (size_t off = 0, n; text[off]; off += n) {
        n = utf8_chunk(text + off, chunk);
        char *piece = xstrndup(text + off, n);
        block_delta(m, type, key, piece, off ? delay_ms : 0);
        free(piece);
    }
}

static cJSON *text_block(const char *type, const char *key, const char *text)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", type);
    cJSON_AddStringToObject(b, key, text);
    return b;
}

static void thinking(struct msg *m, const char *text)
{
    cJSON *b = text_block("thinking", "thinking", "");
    cJSON_AddStringToObject(b, "signature", "");
    block_start(m, b);
    block_deltas(m, "thinking_delta", "thinking", text, ECHO_CHUNK, 0);
    block_delta(m, "signature_delta", "signature", "c3RhbmQtaW4gc2lnbmF0dXJl", 0);
    block_stop(m);
}

static char *tool_id(const struct msg *m)
{
    char id[48];
    snprintf(id, sizeof id, "toolu_standin_%lu_%d", m->id, m->index);
    return xstrndup(id, strlen(id));
}

/* A tool_use block; its input arrives as two input_json_delta pieces, so a
 * client must join them. */
static void tool_use(struct msg *m, const struct answer *a)
{
    char *id = tool_id(m);
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", "tool_use");
    cJSON_AddStringToObject(b, "id", id);
    cJSON_AddStringToObject(b, "name", a->tool_name);
    cJSON_AddItemToObject(b, "input", cJSON_CreateObject());
    block_start(m, b);
    size_t half = strlen(a->tool_args) / 2;
    char *first = xstrndup(a->tool_args, half);
    block_delta(m, "input_json_delta", "partial_json", first, 0);
    block_delta(m, "input_json_delta", "partial_json", a->tool_args + half, 0);
    block_stop(m);
    free(first);
    free(id);
}

/* A mid-stream error event, as the API sends overloaded_error. */
static void stream_error(struct msg *m, const char *code)
{
    char *text = concat("stand-in: scripted failure: ", code);
    cJSON *ev = event("error");
    cJSON *err = cJSON_AddObjectToObject(ev, "error");
    cJSON_AddStringToObject(err, "type", code);
    cJSON_AddStringToObject(err, "message", text);
    msg_emit(m, ev, 0);
    free(text);
}

static struct stream *messages_encode(const struct answer *a, const char *model, size_t body_len)
{
    struct msg m = {.out = xrealloc(NULL, sizeof *m.out),
                    .id = atomic_fetch_add(&g_requests, 1) + 1};
    *m.out = (struct stream){0};
    cJSON *start = event("message_start");
    cJSON *message = message_json(&m, model);
    cJSON_AddItemToObject(message, "usage", usage_json(body_len, a, true));
    cJSON_AddItemToObject(start, "message", message);
    msg_emit(&m, start, 0);
    msg_emit(&m, event("ping"), 0);
    if (a->kind == ANSWER_FAILED) {
        stream_error(&m, a->code);
        return m.out;
    }
    if (a->reasoning)
        thinking(&m, a->reasoning);
    if (a->kind == ANSWER_TOOL_CALL) {
        tool_use(&m, a);
    } else {
        block_start(&m, text_block("text", "text", ""));
        block_deltas(&m, "text_delta", "text", a->text, a->chunk, a->delay_ms);
        block_stop(&m);
    }
    cJSON *md = event("message_delta");
    cJSON *d = cJSON_AddObjectToObject(md, "delta");
    cJSON_AddStringToObject(d, "stop_reason", stop_reason(a));
    cJSON_AddNullToObject(d, "stop_sequence");
    cJSON_AddItemToObject(md, "usage", usage_json(body_len, a, false));
    msg_emit(&m, md, 0);
    msg_emit(&m, event("message_stop"), 0);
    return m.out;
}

/* The whole message in one body, for a request without "stream":true. */
static char *message_whole(const struct answer *a, const char *model, size_t body_len)
{
    struct msg m = {.id = atomic_fetch_add(&g_requests, 1) + 1};
    cJSON *msg = message_json(&m, model);
    cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    if (a->reasoning) {
        cJSON *b = text_block("thinking", "thinking", a->reasoning);
        cJSON_AddStringToObject(b, "signature", "c3RhbmQtaW4gc2lnbmF0dXJl");
        cJSON_AddItemToArray(content, b);
    }
    if (a->kind == ANSWER_TOOL_CALL) {
        char *id = tool_id(&m);
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "type", "tool_use");
        cJSON_AddStringToObject(b, "id", id);
        cJSON_AddStringToObject(b, "name", a->tool_name);
        cJSON_AddItemToObject(b, "input", cJSON_Parse(a->tool_args));
        cJSON_AddItemToArray(content, b);
        free(id);
    } else {
        cJSON_AddItemToArray(content, text_block("text", "text", a->text ? a->text : ""));
    }
    cJSON_ReplaceItemInObjectCaseSensitive(msg, "stop_reason", cJSON_CreateString(stop_reason(a)));
    cJSON_AddItemToObject(msg, "usage", usage_json(body_len, a, false));
    char *json = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    return json;
}

/* ---- HTTP ---------------------------------------------------------------- */

/* An Anthropic error body {"type":"error","error":{"type","message"}}. */
static enum MHD_Result anthropic_error(struct MHD_Connection *c, unsigned status, const char *type,
                                       const char *message)
{
    cJSON *body = event("error");
    cJSON *err = cJSON_AddObjectToObject(body, "error");
    cJSON_AddStringToObject(err, "type", type);
    cJSON_AddStringToObject(err, "message", message);
    char *json = cJSON_PrintUnformatted(body);
    enum MHD_Result ret = reply(c, status, json);
    free(json);
    cJSON_Delete(body);
    return ret;
}

/* The error type the API names for an HTTP status. */
static const char *error_type(int status)
{
    switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

static enum MHD_Result scripted_error(struct MHD_Connection *c, int status)
{
    char msg[64];
    snprintf(msg, sizeof msg, "stand-in: scripted HTTP %d", status);
    return anthropic_error(c, (unsigned)status, error_type(status), msg);
}

/* POST /v1/messages */
enum MHD_Result serve_anthropic_messages(struct MHD_Connection *c, const cJSON *req, size_t len)
{
    if (!req)
        return anthropic_error(c, 400, "invalid_request_error", "stand-in: body is not JSON");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(req, "model");
    const char *model_name = cJSON_IsString(model) ? model->valuestring : "";
    struct prompt p;
    struct answer a;
    enum MHD_Result ret;
    messages_prompt(req, &p);
    script_answer(&p, &claude_dialect, &a);
    if (a.kind == ANSWER_HTTP_ERROR) {
        ret = scripted_error(c, a.status);
    } else if (a.kind == ANSWER_FAILED && strcmp(a.code, "context_length_exceeded") == 0) {
        /* The API refuses an overlong prompt before streaming, with HTTP 400. */
        ret = anthropic_error(c, 400, "invalid_request_error",
                              "prompt is too long: 250000 tokens > 200000 maximum");
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream"))) {
        ret = reply_stream(c, messages_encode(&a, model_name, len));
    } else if (a.kind == ANSWER_FAILED) {
        char *text = concat("stand-in: scripted failure: ", a.code);
        ret = anthropic_error(c, 500, a.code, text);
        free(text);
    } else {
        char *json = message_whole(&a, model_name, len);
        ret = reply(c, 200, json);
        free(json);
    }
    answer_release(&a);
    prompt_release(&p);
    return ret;
}

/* POST /v1/messages/count_tokens: {"input_tokens": N}, N as usage_of counts. */
enum MHD_Result serve_anthropic_count_tokens(struct MHD_Connection *c, const cJSON *req, size_t len)
{
    char json[64];
    (void)req;
    snprintf(json, sizeof json, "{\"input_tokens\":%zu}", len / 4);
    return reply(c, 200, json);
}
