/* SPDX-License-Identifier: MIT */
/*
 * The OpenAI Responses API of baton-standin (POST /v1/responses), as codex
 * 0.171.0 uses it: SSE events response.created, response.in_progress, per
 * output item response.output_item.added / content part / deltas /
 * response.output_item.done (message, reasoning summary, function_call or
 * custom_tool_call), then response.completed with usage, or
 * response.failed. Only "stream":true is served.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin.h"

/* codex 0.171.0 over Responses: exec_command {"cmd"}, apply_patch (custom). */
static const struct dialect codex_dialect = {"exec_command", "cmd", "apply_patch",
                                             true,           NULL,  NULL};

static bool item_is(const cJSON *item, const char *type)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(item, "type");
    return cJSON_IsString(t) && strcmp(t->valuestring, type) == 0;
}

static bool item_is_user_message(const cJSON *item)
{
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(item, "role");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type");
    return cJSON_IsString(role) && strcmp(role->valuestring, "user") == 0 &&
           (!type || item_is(item, "message"));
}

/* The prompt of a Responses request: the last user message in `input`, and the
 * output of a (function or custom) tool call that came back after it. */
static void responses_prompt(const cJSON *req, struct prompt *p)
{
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(req, "input");
    const cJSON *items = cJSON_IsArray(input) ? input : NULL;
    const cJSON *item;
    struct sbuf user = {0};
    *p = (struct prompt){0};
    if (cJSON_IsString(input))
        sbuf_adds(&user, input->valuestring);
    cJSON_ArrayForEach(item, items)
    {
        if (item_is_user_message(item)) {
            user.len = 0;
            content_text(cJSON_GetObjectItemCaseSensitive(item, "content"), &user);
            free(p->tool_output);
            p->tool_output = NULL;
        } else if (item_is(item, "function_call_output") ||
                   item_is(item, "custom_tool_call_output")) {
            struct sbuf out = {0};
            content_text(cJSON_GetObjectItemCaseSensitive(item, "output"), &out);
            free(p->tool_output);
            p->tool_output = sbuf_detach(&out);
        }
    }
    if (user.data)
        user.data[user.len] = '\0';
    p->user = sbuf_detach(&user);
}

/* Encoder state for one Responses stream. */
struct rsp {
    struct stream *out; /* frames produced */
    cJSON *response;    /* the response object echoed in created/completed */
    unsigned long id;   /* request number, used in every id */
    int seq;            /* sequence_number of the next event */
    int index;          /* output_index of the next output item */
};

/* A new event of `type`, numbered; members are added by the caller. */
static cJSON *rsp_event(struct rsp *r, const char *type)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", type);
    cJSON_AddNumberToObject(ev, "sequence_number", r->seq++);
    return ev;
}

/* Append `ev` (consumed) as one SSE frame, sent after `delay_ms`. */
static void rsp_emit(struct rsp *r, cJSON *ev, unsigned delay_ms)
{
    sse_emit(r->out, true, ev, "\n", delay_ms);
}

/* An event carrying a copy of the response object in its current state. */
static void rsp_emit_response(struct rsp *r, const char *type, const char *status)
{
    cJSON_ReplaceItemInObjectCaseSensitive(r->response, "status", cJSON_CreateString(status));
    cJSON *ev = rsp_event(r, type);
    cJSON_AddItemToObject(ev, "response", cJSON_Duplicate(r->response, 1));
    rsp_emit(r, ev, 0);
}

static char *rsp_id(const struct rsp *r, const char *prefix)
{
    char id[64];
    snprintf(id, sizeof id, "%s_%lu_%d", prefix, r->id, r->index);
    return xstrndup(id, strlen(id));
}

/* Events with item_id/output_index plus one more member (consumed). */
static void rsp_emit_part(struct rsp *r, const char *type, const char *item_id, const char *key,
                          cJSON *value, unsigned delay_ms)
{
    cJSON *ev = rsp_event(r, type);
    cJSON_AddStringToObject(ev, "item_id", item_id);
    cJSON_AddNumberToObject(ev, "output_index", r->index);
    if (strstr(type, "reasoning_summary"))
        cJSON_AddNumberToObject(ev, "summary_index", 0);
    else if (!strstr(type, "_call"))
        cJSON_AddNumberToObject(ev, "content_index", 0);
    cJSON_AddItemToObject(ev, key, value);
    rsp_emit(r, ev, delay_ms);
}

/* output_item.added (item as given) and, at the end, output_item.done with the
 * finished item, which is also kept for response.completed. */
static void rsp_item_event(struct rsp *r, const char *type, const cJSON *item)
{
    cJSON *ev = rsp_event(r, type);
    cJSON_AddNumberToObject(ev, "output_index", r->index);
    cJSON_AddItemToObject(ev, "item", cJSON_Duplicate(item, 1));
    rsp_emit(r, ev, 0);
}

static void rsp_item_done(struct rsp *r, cJSON *item)
{
    rsp_item_event(r, "response.output_item.done", item);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(r->response, "output"), item);
    r->index++;
}

static cJSON *text_part(const char *type, const char *text)
{
    cJSON *part = cJSON_CreateObject();
    cJSON_AddStringToObject(part, "type", type);
    cJSON_AddStringToObject(part, "text", text);
    if (strcmp(type, "output_text") == 0)
        cJSON_AddItemToObject(part, "annotations", cJSON_CreateArray());
    return part;
}

/* Stream `text` as deltas of event `delta_type`, paced per struct answer. */
static void rsp_deltas(struct rsp *r, const char *delta_type, const char *id, const char *text,
                       size_t chunk, unsigned delay_ms)
{
    for (size_t off = 0, n; text[off]; off += n) {
        n = utf8_chunk(text + off, chunk);
        char *piece = xstrndup(text + off, n);
        rsp_emit_part(r, delta_type, id, "delta", cJSON_CreateString(piece), off ? delay_ms : 0);
        free(piece);
    }
}

static void rsp_message(struct rsp *r, const struct answer *a)
{
    char *id = rsp_id(r, "msg");
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "id", id);
    cJSON_AddStringToObject(item, "type", "message");
    cJSON_AddStringToObject(item, "status", "in_progress");
    cJSON_AddStringToObject(item, "role", "assistant");
    cJSON *content = cJSON_AddArrayToObject(item, "content");
    rsp_item_event(r, "response.output_item.added", item);
    rsp_emit_part(r, "response.content_part.added", id, "part", text_part("output_text", ""), 0);
    rsp_deltas(r, "response.output_text.delta", id, a->text, a->chunk, a->delay_ms);
    rsp_emit_part(r, "response.output_text.done", id, "text", cJSON_CreateString(a->text), 0);
    rsp_emit_part(r, "response.content_part.done", id, "part", text_part("output_text", a->text),
                  0);
    cJSON_AddItemToArray(content, text_part("output_text", a->text));
    cJSON_ReplaceItemInObjectCaseSensitive(item, "status", cJSON_CreateString("completed"));
    rsp_item_done(r, item);
    free(id);
}

static void rsp_reasoning(struct rsp *r, const char *summary)
{
    char *id = rsp_id(r, "rs");
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "id", id);
    cJSON_AddStringToObject(item, "type", "reasoning");
    cJSON *parts = cJSON_AddArrayToObject(item, "summary");
    rsp_item_event(r, "response.output_item.added", item);
    rsp_emit_part(r, "response.reasoning_summary_part.added", id, "part",
                  text_part("summary_text", ""), 0);
    rsp_deltas(r, "response.reasoning_summary_text.delta", id, summary, ECHO_CHUNK, 0);
    rsp_emit_part(r, "response.reasoning_summary_text.done", id, "text",
                  cJSON_CreateString(summary), 0);
    rsp_emit_part(r, "response.reasoning_summary_part.done", id, "part",
                  text_part("summary_text", summary), 0);
    cJSON_AddItemToArray(parts, text_part("summary_text", summary));
    rsp_item_done(r, item);
    free(id);
}

/* A tool call: function_call (JSON arguments) or custom_tool_call (freeform
 * input), with its argument deltas. */
static void rsp_tool_call(struct rsp *r, const struct answer *a)
{
    const char *args_key = a->custom ? "input" : "arguments";
    char *id = rsp_id(r, a->custom ? "ctc" : "fc");
    char *call_id = rsp_id(r, "call");
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "id", id);
    cJSON_AddStringToObject(item, "type", a->custom ? "custom_tool_call" : "function_call");
    cJSON_AddStringToObject(item, "status", "in_progress");
    cJSON_AddStringToObject(item, "call_id", call_id);
    cJSON_AddStringToObject(item, "name", a->tool_name);
    cJSON_AddStringToObject(item, args_key, "");
    rsp_item_event(r, "response.output_item.added", item);
    rsp_emit_part(r,
                  a->custom ? "response.custom_tool_call_input.delta"
                            : "response.function_call_arguments.delta",
                  id, "delta", cJSON_CreateString(a->tool_args), 0);
    rsp_emit_part(r,
                  a->custom ? "response.custom_tool_call_input.done"
                            : "response.function_call_arguments.done",
                  id, args_key, cJSON_CreateString(a->tool_args), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(item, args_key, cJSON_CreateString(a->tool_args));
    cJSON_ReplaceItemInObjectCaseSensitive(item, "status", cJSON_CreateString("completed"));
    rsp_item_done(r, item);
    free(call_id);
    free(id);
}

/* Responses usage: input_tokens (cached included), output_tokens (reasoning
 * included), their details and the total. */
static cJSON *usage_json(size_t body_len, const struct answer *a)
{
    struct usage n = usage_of(body_len, a);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "input_tokens", n.input);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "input_tokens_details"), "cached_tokens",
                            n.cached);
    cJSON_AddNumberToObject(u, "output_tokens", n.output);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "output_tokens_details"), "reasoning_tokens",
                            n.reasoning);
    cJSON_AddNumberToObject(u, "total_tokens", n.input + n.output);
    return u;
}

static void rsp_failed(struct rsp *r, const char *code)
{
    cJSON *err = cJSON_AddObjectToObject(r->response, "error");
    cJSON_AddStringToObject(err, "code", code);
    cJSON_AddStringToObject(err, "message", "stand-in: scripted failure");
    rsp_emit_response(r, "response.failed", "failed");
}

/* Encode a streamed answer (not ANSWER_HTTP_ERROR) as Responses SSE frames. */
static struct stream *responses_encode(const struct answer *a, const char *model, size_t body_len)
{
    struct rsp r = {.out = xrealloc(NULL, sizeof *r.out),
                    .id = atomic_fetch_add(&g_requests, 1) + 1};
    *r.out = (struct stream){0};
    char id[32];
    snprintf(id, sizeof id, "resp_%lu", r.id);
    r.response = cJSON_CreateObject();
    cJSON_AddStringToObject(r.response, "id", id);
    cJSON_AddStringToObject(r.response, "object", "response");
    cJSON_AddNumberToObject(r.response, "created_at", (double)time(NULL));
    cJSON_AddStringToObject(r.response, "status", "in_progress");
    cJSON_AddStringToObject(r.response, "model", model);
    cJSON_AddArrayToObject(r.response, "output");
    rsp_emit_response(&r, "response.created", "in_progress");
    rsp_emit_response(&r, "response.in_progress", "in_progress");
    if (a->kind == ANSWER_FAILED) {
        rsp_failed(&r, a->code);
    } else {
        if (a->reasoning)
            rsp_reasoning(&r, a->reasoning);
        if (a->kind == ANSWER_TOOL_CALL)
            rsp_tool_call(&r, a);
        else
            rsp_message(&r, a);
        cJSON_AddItemToObject(r.response, "usage", usage_json(body_len, a));
        rsp_emit_response(&r, "response.completed", "completed");
    }
    cJSON_Delete(r.response);
    return r.out;
}

/* POST /v1/responses */
enum MHD_Result serve_responses(struct MHD_Connection *c, const cJSON *req, size_t len)
{
    if (!req)
        return reply_error(c, 400, "invalid_request_error", "invalid_json",
                           "stand-in: body is not JSON");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream")))
        return reply_error(c, 400, "invalid_request_error", "stream_required",
                           "stand-in: only stream:true is supported");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(req, "model");
    struct prompt p;
    struct answer a;
    responses_prompt(req, &p);
    script_answer(&p, &codex_dialect, &a);
    enum MHD_Result ret =
        a.kind == ANSWER_HTTP_ERROR
            ? reply_scripted_error(c, &a)
            : reply_stream(
                  c, responses_encode(&a, cJSON_IsString(model) ? model->valuestring : "", len));
    answer_release(&a);
    prompt_release(&p);
    return ret;
}
