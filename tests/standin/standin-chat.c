/* SPDX-License-Identifier: MIT */
/*
 * The OpenAI Chat Completions API of baton-standin (POST /v1/chat/completions),
 * as pi 0.73.1, opencode 1.18.33 and copilot 1.0.102 use it: SSE chunks of
 * chat.completion.chunk with "stream":true (role chunk, reasoning_content
 * and content or tool_calls deltas, finish_reason, a usage chunk when
 * stream_options.include_usage, "data: [DONE]"), else one chat.completion
 * body. Errors are OpenAI's {"error":{message,type,param,code}}.
 *
 * The three clients name their tools differently; the request's declared
 * tools tell them apart (chat_dialect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin.h"

/* Over Chat Completions, told apart by the tools a request declares:
 * pi 0.73.1: bash {"command"}, write {"path","content"};
 * opencode 1.18.33: bash {"command"}, write {"filePath","content"};
 * copilot 1.0.102: bash {"command"}, create {"path","file_text"}. */
static const struct dialect pi_dialect = {"bash", "command", "write", false, "path", NULL};
static const struct dialect opencode_dialect = {"bash", "command",  "write",
                                                false,  "filePath", NULL};
static const struct dialect copilot_dialect = {"bash", "command", "create",
                                               false,  "path",    "file_text"};
static const struct dialect *const chat_dialects[] = {&pi_dialect, &opencode_dialect,
                                                      &copilot_dialect, NULL};

static bool role_is(const cJSON *msg, const char *role)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(msg, "role");
    return cJSON_IsString(r) && strcmp(r->valuestring, role) == 0;
}

/* The prompt of a Chat Completions request: the last "user" message in
 * `messages`, and the content of a "tool" message (a tool result) after it. */
static void chat_prompt(const cJSON *req, struct prompt *p)
{
    const cJSON *msg;
    struct sbuf user = {0};
    *p = (struct prompt){0};
    cJSON_ArrayForEach(msg, cJSON_GetObjectItemCaseSensitive(req, "messages"))
    {
        if (role_is(msg, "user")) {
            user.len = 0;
            content_text(cJSON_GetObjectItemCaseSensitive(msg, "content"), &user);
            free(p->tool_output);
            p->tool_output = NULL;
        } else if (role_is(msg, "tool")) {
            struct sbuf out = {0};
            content_text(cJSON_GetObjectItemCaseSensitive(msg, "content"), &out);
            free(p->tool_output);
            p->tool_output = sbuf_detach(&out);
        }
    }
    if (user.data)
        user.data[user.len] = '\0';
    p->user = sbuf_detach(&user);
    prompt_unwrap(p->user);
}

/* The dialect of a Chat Completions request, from its "tools":
 * [{"type":"function","function":{"name","parameters":{"properties"}}}];
 * NULL when it declares none of the known ones (e.g. a title request). */
static const struct dialect *chat_dialect(const cJSON *req)
{
    struct tool_decls t = {0};
    const cJSON *tool;
    cJSON_ArrayForEach(tool, cJSON_GetObjectItemCaseSensitive(req, "tools"))
    {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tool, "function");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(fn, "parameters");
        if (cJSON_IsString(name))
            tool_decls_add(&t, name->valuestring,
                           cJSON_GetObjectItemCaseSensitive(params, "properties"));
    }
    const struct dialect *d = dialect_pick(&t, chat_dialects, NULL);
    tool_decls_release(&t);
    return d;
}

/* Encoder state for one Chat Completions stream. */
struct chat {
    struct stream *out; /* frames produced */
    unsigned long id;   /* request number, used in every id */
    const char *model;  /* echoed in every chunk */
    double created;     /* unix time, the same in every chunk */
    bool with_usage;    /* stream_options.include_usage was asked for */
};

/* Append `obj` (consumed) as one "data: …" SSE frame, sent after `delay_ms`. */
static void chat_emit(struct chat *c, cJSON *obj, unsigned delay_ms)
{
    sse_emit(c->out, false, obj, "\n", delay_ms);
}

/* A chat.completion.chunk with no choices yet; "usage":null in every chunk
 * but the last when usage was asked for, as OpenAI does. */
static cJSON *chat_chunk(const struct chat *c)
{
    char id[32];
    snprintf(id, sizeof id, "chatcmpl-%lu", c->id);
    cJSON *chunk = cJSON_CreateObject();
    cJSON_AddStringToObject(chunk, "id", id);
    cJSON_AddStringToObject(chunk, "object", "chat.completion.chunk");
    cJSON_AddNumberToObject(chunk, "created", c->created);
    cJSON_AddStringToObject(chunk, "model", c->model);
    cJSON_AddArrayToObject(chunk, "choices");
    if (c->with_usage)
        cJSON_AddNullToObject(chunk, "usage");
    return chunk;
}

/* Emit a chunk whose one choice carries `delta` (consumed) and `finish`
 * (NULL: null). */
static void chat_emit_delta(struct chat *c, cJSON *delta, const char *finish, unsigned delay_ms)
{
    cJSON *chunk = chat_chunk(c);
    cJSON *choice = cJSON_CreateObject();
    cJSON_AddNumberToObject(choice, "index", 0);
    cJSON_AddItemToObject(choice, "delta", delta);
    cJSON_AddNullToObject(choice, "logprobs");
    if (finish)
        cJSON_AddStringToObject(choice, "finish_reason", finish);
    else
        cJSON_AddNullToObject(choice, "finish_reason");
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(chunk, "choices"), choice);
    chat_emit(c, chunk, delay_ms);
}

/* Deltas {key: piece} of `text`, paced per struct answer. */
static void chat_text_deltas(struct chat *c, const char *key, const char *text, size_t chunk,
                             unsigned delay_ms)
{
    for (size_t off = 0, n; text[off]; off += n) {
        n = utf8_chunk(text + off, chunk);
        char *piece = xstrndup(text + off, n);
        cJSON *delta = cJSON_CreateObject();
        cJSON_AddStringToObject(delta, key, piece);
        chat_emit_delta(c, delta, NULL, off ? delay_ms : 0);
        free(piece);
    }
}

/* One tool call at index 0: its id, type and name with empty arguments,
 * then the arguments in short pieces. */
static void chat_tool_call(struct chat *c, const struct answer *a)
{
    char id[48];
    snprintf(id, sizeof id, "call_%lu_0", c->id);
    cJSON *delta = cJSON_CreateObject();
    cJSON *call = cJSON_CreateObject();
    cJSON_AddNumberToObject(call, "index", 0);
    cJSON_AddStringToObject(call, "id", id);
    cJSON_AddStringToObject(call, "type", "function");
    cJSON *fn = cJSON_AddObjectToObject(call, "function");
    cJSON_AddStringToObject(fn, "name", a->tool_name);
    cJSON_AddStringToObject(fn, "arguments", "");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(delta, "tool_calls"), call);
    chat_emit_delta(c, delta, NULL, 0);
    for (size_t off = 0, n; a->tool_args[off]; off += n) {
        n = utf8_chunk(a->tool_args + off, ECHO_CHUNK);
        char *piece = xstrndup(a->tool_args + off, n);
        delta = cJSON_CreateObject();
        call = cJSON_CreateObject();
        cJSON_AddNumberToObject(call, "index", 0);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(call, "function"), "arguments", piece);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(delta, "tool_calls"), call);
        chat_emit_delta(c, delta, NULL, 0);
        free(piece);
    }
}

/* Chat usage: prompt_tokens (cached included), completion_tokens (reasoning
 * included), their details and the total. */
static cJSON *chat_usage_json(size_t body_len, const struct answer *a)
{
    struct usage n = usage_of(body_len, a);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "prompt_tokens", n.input);
    cJSON_AddNumberToObject(u, "completion_tokens", n.output);
    cJSON_AddNumberToObject(u, "total_tokens", n.input + n.output);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "prompt_tokens_details"), "cached_tokens",
                            n.cached);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "completion_tokens_details"),
                            "reasoning_tokens", n.reasoning);
    return u;
}

/* A failed stream: an error object in place of a chunk, as OpenAI-compatible
 * servers send it mid-stream (the OpenAI SDK throws on a chunk with "error").
 * The message names the code too: pi classifies errors by their message text
 * only (retryable, context overflow). */
static void chat_failed(struct chat *c, const char *code)
{
    char *msg = concat("stand-in: scripted failure: ", code);
    cJSON *body = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(body, "error");
    cJSON_AddStringToObject(err, "message", msg);
    free(msg);
    cJSON_AddStringToObject(err, "type", "server_error");
    cJSON_AddNullToObject(err, "param");
    cJSON_AddStringToObject(err, "code", code);
    chat_emit(c, body, 0);
}

/*
 * Encode a streamed answer (not ANSWER_HTTP_ERROR) as Chat Completions SSE
 * frames: a role chunk, reasoning_content deltas, content or tool_calls
 * deltas, a chunk with finish_reason ("stop" or "tool_calls"), a usage chunk
 * with no choices when `with_usage`, then "data: [DONE]". A failed answer
 * ends after the role chunk with an error object and no [DONE].
 */
static struct stream *chat_encode(const struct answer *a, const char *model, size_t body_len,
                                  bool with_usage)
{
    struct chat c = {.out = xrealloc(NULL, sizeof *c.out),
                     .id = atomic_fetch_add(&g_requests, 1) + 1,
                     .model = model,
                     .created = (double)time(NULL),
                     .with_usage = with_usage};
    *c.out = (struct stream){0};
    cJSON *delta = cJSON_CreateObject();
    cJSON_AddStringToObject(delta, "role", "assistant");
    if (a->kind == ANSWER_TOOL_CALL)
        cJSON_AddNullToObject(delta, "content");
    else
        cJSON_AddStringToObject(delta, "content", "");
    chat_emit_delta(&c, delta, NULL, 0);
    if (a->kind == ANSWER_FAILED) {
        chat_failed(&c, a->code);
        return c.out;
    }
    if (a->reasoning)
        chat_text_deltas(&c, "reasoning_content", a->reasoning, ECHO_CHUNK, 0);
    if (a->kind == ANSWER_TOOL_CALL)
        chat_tool_call(&c, a);
    else
        chat_text_deltas(&c, "content", a->text, a->chunk, a->delay_ms);
    chat_emit_delta(&c, cJSON_CreateObject(), a->kind == ANSWER_TOOL_CALL ? "tool_calls" : "stop",
                    0);
    if (with_usage) {
        cJSON *chunk = chat_chunk(&c);
        cJSON_ReplaceItemInObjectCaseSensitive(chunk, "usage", chat_usage_json(body_len, a));
        chat_emit(&c, chunk, 0);
    }
    static const char done[] = "data: [DONE]\n\n";
    stream_add(c.out, done, sizeof done - 1, 0);
    return c.out;
}
/* The whole answer as one chat.completion body, for a request without
 * "stream":true: the message (content, reasoning_content, tool_calls), its
 * finish_reason and the usage. */
static char *chat_whole(const struct answer *a, const char *model, size_t body_len)
{
    unsigned long n = atomic_fetch_add(&g_requests, 1) + 1;
    char id[48];
    snprintf(id, sizeof id, "chatcmpl-%lu", n);
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "id", id);
    cJSON_AddStringToObject(body, "object", "chat.completion");
    cJSON_AddNumberToObject(body, "created", (double)time(NULL));
    cJSON_AddStringToObject(body, "model", model);
    cJSON *choice = cJSON_CreateObject();
    cJSON_AddNumberToObject(choice, "index", 0);
    cJSON *msg = cJSON_AddObjectToObject(choice, "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    if (a->reasoning)
        cJSON_AddStringToObject(msg, "reasoning_content", a->reasoning);
    if (a->kind == ANSWER_TOOL_CALL) {
        snprintf(id, sizeof id, "call_%lu_0", n);
        cJSON_AddNullToObject(msg, "content");
        cJSON *call = cJSON_CreateObject();
        cJSON_AddStringToObject(call, "id", id);
        cJSON_AddStringToObject(call, "type", "function");
        cJSON *fn = cJSON_AddObjectToObject(call, "function");
        cJSON_AddStringToObject(fn, "name", a->tool_name);
        cJSON_AddStringToObject(fn, "arguments", a->tool_args);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(msg, "tool_calls"), call);
    } else {
        cJSON_AddStringToObject(msg, "content", a->text);
    }
    cJSON_AddStringToObject(choice, "finish_reason",
                            a->kind == ANSWER_TOOL_CALL ? "tool_calls" : "stop");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(body, "choices"), choice);
    cJSON_AddItemToObject(body, "usage", chat_usage_json(body_len, a));
    char *json = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);
    return json;
}

/* POST /v1/chat/completions: a stream (SSE chunks) with "stream":true, else
 * one chat.completion body. context_length_exceeded is HTTP 400 (but for
 * pi, mid-stream); another scripted failure without a stream is HTTP 500. */
enum MHD_Result serve_chat(struct MHD_Connection *c, const cJSON *req, size_t len)
{
    if (!req)
        return reply_error(c, 400, "invalid_request_error", "invalid_json",
                           "stand-in: body is not JSON");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(req, "model");
    const char *model_name = cJSON_IsString(model) ? model->valuestring : "";
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(req, "stream_options");
    bool with_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(opts, "include_usage"));
    struct prompt p;
    struct answer a;
    enum MHD_Result ret;
    const struct dialect *d = chat_dialect(req);
    chat_prompt(req, &p);
    script_answer(&p, d ? d : &pi_dialect, &a);
    bool overflow = a.kind == ANSWER_FAILED && strcmp(a.code, "context_length_exceeded") == 0;
    if (a.kind == ANSWER_HTTP_ERROR) {
        ret = reply_scripted_error(c, &a);
    } else if (overflow && d != &pi_dialect) {
        /* The API refuses an overlong prompt before streaming (HTTP 400).
         * pi keeps the mid-stream error its fixtures were recorded with. */
        ret = reply_error(c, 400, "invalid_request_error", a.code,
                          "This model's maximum context length is 128000 tokens. However, your "
                          "messages resulted in 250000 tokens. Please reduce the length of the "
                          "messages.");
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream"))) {
        ret = reply_stream(c, chat_encode(&a, model_name, len, with_usage));
    } else if (a.kind == ANSWER_FAILED) {
        char *msg = concat("stand-in: scripted failure: ", a.code);
        ret = reply_error(c, overflow ? 400 : 500,
                          overflow ? "invalid_request_error" : "server_error", a.code, msg);
        free(msg);
    } else {
        char *json = chat_whole(&a, model_name, len);
        ret = reply(c, 200, json);
        free(json);
    }
    answer_release(&a);
    prompt_release(&p);
    return ret;
}
