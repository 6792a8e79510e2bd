/* SPDX-License-Identifier: MIT */
/*
 * The Gemini API of baton-standin, as gemini-cli 0.61.0 uses it (base URL
 * from GOOGLE_GEMINI_BASE_URL, API version v1beta):
 *   POST /v1beta/models/<model>:streamGenerateContent?alt=sse  the turn
 *   POST /v1beta/models/<model>:generateContent   side requests (JSON mode)
 *   POST /v1beta/models/<model>:countTokens       {"totalTokens": N}
 *
 * Shapes follow the public Gemini API reference (ai.google.dev/api,
 * "Generating content", "Counting tokens"): a request has "contents"
 * [{role: user|model, parts: [{text} | {functionCall:{name,args}} |
 * {functionResponse:{name,response}}]}] and "tools"
 * [{functionDeclarations:[{name, parameters | parametersJsonSchema}]}]. A
 * streamed answer is SSE "data: <GenerateContentResponse>" frames, each with
 * candidates[0].content.parts (text pieces, thought:true parts for thinking,
 * or one functionCall whole) and the last with finishReason "STOP" and
 * usageMetadata. Errors are {"error":{"code","message","status"}} with the
 * google.rpc status name (UNAUTHENTICATED, RESOURCE_EXHAUSTED, INTERNAL, …),
 * as an HTTP body, or as one frame mid-stream for [[failed:CODE]]; an overlong
 * prompt is refused before streaming with 400 INVALID_ARGUMENT.
 *
 * The script is the shared one (script_answer) with gemini's tool names:
 * run_shell_command {"command"}, write_file {"file_path","content"}. A
 * functionResponse in the last user content continues the script ("Tool
 * output: <first line of its output>").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

/* gemini-cli 0.61.0's built-in tools. */
static const struct dialect gemini_dialect = {"run_shell_command", "command", "write_file", false,
                                              "file_path",         NULL};

/* ---- the prompt of a request --------------------------------------------- */

/* gemini-cli 0.61.0 wraps run_shell_command's result as
 * "<untrusted_context>\nOutput: <stdout>\nProcess Group PGID: N\n…": keep
 * what follows "Output: ", so the script quotes the command's first line. */
static char *shell_output(const char *s)
{
    static const char wrap[] = "<untrusted_context>\n", label[] = "Output: ";
    if (strncmp(s, wrap, sizeof wrap - 1) == 0) {
        s += sizeof wrap - 1;
        if (strncmp(s, label, sizeof label - 1) == 0)
            s += sizeof label - 1;
    }
    return xstrndup(s, strlen(s));
}

/* The output of a functionResponse part: response.output when it is a
 * string (gemini-cli's shape), else response.error (a refused call), else
 * the response object as JSON. */
static char *function_output(const cJSON *fr)
{
    const cJSON *rsp = cJSON_GetObjectItemCaseSensitive(fr, "response");
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(rsp, "output");
    if (!cJSON_IsString(out))
        out = cJSON_GetObjectItemCaseSensitive(rsp, "error");
    if (cJSON_IsString(out))
        return shell_output(out->valuestring);
    char *json = rsp ? cJSON_PrintUnformatted(rsp) : NULL;
    char *copy = xstrndup(json ? json : "", json ? strlen(json) : 0);
    free(json);
    return copy;
}

/* gemini-cli sends its environment as a text part of the first user
 * content, before the typed prompt; it is not what the user typed. */
static bool is_context(const char *text)
{
    return strncmp(text, "<session_context>", strlen("<session_context>")) == 0;
}

/* The typed text of a content's parts: its text parts but thoughts and the
 * session context, joined; the context too if nothing else. */
static void parts_text(const cJSON *parts, struct sbuf *out)
{
    const cJSON *part;
    for (int pass = 0; pass < 2 && out->len == 0; pass++) {
        cJSON_ArrayForEach(part, parts)
        {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
            if (cJSON_IsString(t) &&
                !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(part, "thought")) &&
                (pass || !is_context(t->valuestring)))
                sbuf_adds(out, t->valuestring);
        }
    }
}

/* The last "user" content with text gives the prompt; a functionResponse
 * part in a user content after it gives the tool output. */
static void gemini_prompt(const cJSON *req, struct prompt *p)
{
    const cJSON *content;
    *p = (struct prompt){0};
    struct sbuf user = {0};
    cJSON_ArrayForEach(content, cJSON_GetObjectItemCaseSensitive(req, "contents"))
    {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(content, "role");
        if (!cJSON_IsString(role) || strcmp(role->valuestring, "user") != 0)
            continue;
        const cJSON *parts = cJSON_GetObjectItemCaseSensitive(content, "parts");
        const cJSON *part;
        struct sbuf text = {0};
        parts_text(parts, &text);
        if (text.len) {
            free(user.data);
            user = text;
            free(p->tool_output);
            p->tool_output = NULL;
            continue;
        }
        cJSON_ArrayForEach(part, parts)
        {
            const cJSON *fr = cJSON_GetObjectItemCaseSensitive(part, "functionResponse");
            if (fr) {
                free(p->tool_output);
                p->tool_output = function_output(fr);
            }
        }
    }
    p->user = sbuf_detach(&user);
}

/* ---- the encoder --------------------------------------------------------- */

struct gem {
    struct stream *out; /* frames produced */
    unsigned long id;   /* request number, in responseId */
    const char *model;  /* modelVersion */
};

/* usageMetadata: promptTokenCount includes the cached tokens,
 * candidatesTokenCount excludes the thoughts. */
static cJSON *usage_json(size_t body_len, const struct answer *a)
{
    struct usage n = usage_of(body_len, a);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "promptTokenCount", n.input);
    cJSON_AddNumberToObject(u, "candidatesTokenCount", n.output - n.reasoning);
    cJSON_AddNumberToObject(u, "totalTokenCount", n.input + n.output);
    cJSON_AddNumberToObject(u, "cachedContentTokenCount", n.cached);
    if (a->reasoning)
        cJSON_AddNumberToObject(u, "thoughtsTokenCount", n.reasoning);
    return u;
}

/* A GenerateContentResponse with one candidate holding `parts` (consumed). */
static cJSON *response_json(const struct gem *g, cJSON *parts)
{
    char id[48];
    snprintf(id, sizeof id, "standin-gemini-%lu", g->id);
    cJSON *rsp = cJSON_CreateObject();
    cJSON *cand = cJSON_CreateObject();
    cJSON *content = cJSON_AddObjectToObject(cand, "content");
    cJSON_AddItemToObject(content, "parts", parts);
    cJSON_AddStringToObject(content, "role", "model");
    cJSON_AddNumberToObject(cand, "index", 0);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rsp, "candidates"), cand);
    cJSON_AddStringToObject(rsp, "modelVersion", g->model);
    cJSON_AddStringToObject(rsp, "responseId", id);
    return rsp;
}

static void finish(cJSON *rsp, const struct answer *a, size_t body_len)
{
    cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rsp, "candidates"), 0);
    cJSON_AddStringToObject(cand, "finishReason", "STOP");
    cJSON_AddItemToObject(rsp, "usageMetadata", usage_json(body_len, a));
}

/* Append `obj` (consumed) as one "data: …" frame; the API ends frames with
 * CRLF CRLF. */
static void gem_emit(struct gem *g, cJSON *obj, unsigned delay_ms)
{
    sse_emit(g->out, false, obj, "\r\n", delay_ms);
}

static cJSON *text_part(const char *text, bool thought)
{
    cJSON *part = cJSON_CreateObject();
    cJSON_AddStringToObject(part, "text", text);
    if (thought)
        cJSON_AddBoolToObject(part, "thought", true);
    return part;
}

static cJSON *call_part(const struct answer *a)
{
    cJSON *part = cJSON_CreateObject();
    cJSON *call = cJSON_AddObjectToObject(part, "functionCall");
    cJSON_AddStringToObject(call, "name", a->tool_name);
    cJSON *args = cJSON_Parse(a->tool_args);
    cJSON_AddItemToObject(call, "args", args ? args : cJSON_CreateObject());
    return part;
}

/* google.rpc status name of an HTTP status, as the API pairs them. */
static const char *status_name(int status)
{
    switch (status) {
    case 400: return "INVALID_ARGUMENT";
    case 401: return "UNAUTHENTICATED";
    case 403: return "PERMISSION_DENIED";
    case 404: return "NOT_FOUND";
    case 429: return "RESOURCE_EXHAUSTED";
    case 503: return "UNAVAILABLE";
    case 504: return "DEADLINE_EXCEEDED";
    default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
    }
}

static cJSON *error_json(int status, const char *message)
{
    cJSON *body = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(body, "error");
    cJSON_AddNumberToObject(err, "code", status);
    cJSON_AddStringToObject(err, "message", message);
    cJSON_AddStringToObject(err, "status", status_name(status));
    return body;
}

/*
 * Encode a streamed answer (not ANSWER_HTTP_ERROR): thought parts, then text
 * pieces or one functionCall, the last frame carrying finishReason and
 * usageMetadata. A failed answer sends one text frame, then an error frame.
 */
static struct stream *gemini_encode(const struct answer *a, const char *model, size_t body_len)
{
    struct gem g = {.out = xrealloc(NULL, sizeof *g.out),
                    .id = atomic_fetch_add(&g_requests, 1) + 1,
                    .model = model};
    *g.out = (struct stream){0};
    if (a->kind == ANSWER_FAILED) {
        char *msg = concat("stand-in: scripted failure: ", a->code);
        gem_emit(&g, error_json(500, msg), 0);
        free(msg);
        return g.out;
    }
    if (a->reasoning) {
        /* Gemini's thoughts open with a bold subject line, which gemini-cli
         * parses out of each thought part: one part, not pieces. */
        char *thought = concat("**Thinking**\n\n", a->reasoning);
        cJSON *parts = cJSON_CreateArray();
        cJSON_AddItemToArray(parts, text_part(thought, true));
        gem_emit(&g, response_json(&g, parts), 0);
        free(thought);
    }
    cJSON *last;
    unsigned last_delay = 0;
    if (a->kind == ANSWER_TOOL_CALL) {
        cJSON *parts = cJSON_CreateArray();
        cJSON_AddItemToArray(parts, call_part(a));
        last = response_json(&g, parts);
    } else {
        /* every piece but the last as its own frame; the last one finishes */
        size_t len = strlen(a->text), off = 0;
        for (size_t n; off < len && off + (n = utf8_chunk(a->text + off, a->chunk)) < len;
             off += n) {
            char *piece = xstrndup(a->text + off, n);
            cJSON *parts = cJSON_CreateArray();
            cJSON_AddItemToArray(parts, text_part(piece, false));
            gem_emit(&g, response_json(&g, parts), off ? a->delay_ms : 0);
            free(piece);
        }
        cJSON *parts = cJSON_CreateArray();
        cJSON_AddItemToArray(parts, text_part(a->text + off, false));
        last = response_json(&g, parts);
        last_delay = off ? a->delay_ms : 0;
    }
    finish(last, a, body_len);
    gem_emit(&g, last, last_delay);
    return g.out;
}

/* The whole answer as one GenerateContentResponse (:generateContent). */
static char *gemini_whole(const struct answer *a, const char *model, size_t body_len)
{
    struct gem g = {.id = atomic_fetch_add(&g_requests, 1) + 1, .model = model};
    cJSON *parts = cJSON_CreateArray();
    if (a->reasoning)
        cJSON_AddItemToArray(parts, text_part(a->reasoning, true));
    if (a->kind == ANSWER_TOOL_CALL)
        cJSON_AddItemToArray(parts, call_part(a));
    else
        cJSON_AddItemToArray(parts, text_part(a->text ? a->text : "", false));
    cJSON *rsp = response_json(&g, parts);
    finish(rsp, a, body_len);
    char *json = cJSON_PrintUnformatted(rsp);
    cJSON_Delete(rsp);
    return json;
}

/*
 * A JSON-mode side request (generationConfig.responseMimeType
 * "application/json", e.g. gemini's next-speaker check) wants JSON text of
 * its schema: each required string property gets its first enum value (""
 * without one), booleans false, numbers 0, so "next_speaker" is "user" and
 * the turn ends.
 */
static char *json_mode_text(const cJSON *schema)
{
    cJSON *obj = cJSON_CreateObject();
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *req;
    cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(schema, "required"))
    {
        if (!cJSON_IsString(req))
            continue;
        const cJSON *prop = cJSON_GetObjectItemCaseSensitive(props, req->valuestring);
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(prop, "type");
        const char *t = cJSON_IsString(type) ? type->valuestring : "string";
        const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(prop, "enum"), 0);
        if (strcmp(t, "boolean") == 0 || strcmp(t, "BOOLEAN") == 0)
            cJSON_AddBoolToObject(obj, req->valuestring, false);
        else if (strcmp(t, "number") == 0 || strcmp(t, "integer") == 0 ||
                 strcmp(t, "NUMBER") == 0 || strcmp(t, "INTEGER") == 0)
            cJSON_AddNumberToObject(obj, req->valuestring, 0);
        else
            cJSON_AddStringToObject(obj, req->valuestring,
                                    cJSON_IsString(first) ? first->valuestring : "");
    }
    char *json = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    return json;
}

/* ---- HTTP ---------------------------------------------------------------- */

static enum MHD_Result gemini_error(struct MHD_Connection *c, int status, const char *message)
{
    cJSON *body = error_json(status, message);
    char *json = cJSON_PrintUnformatted(body);
    enum MHD_Result ret = reply(c, (unsigned)status, json);
    free(json);
    cJSON_Delete(body);
    return ret;
}

/* :streamGenerateContent (stream) and :generateContent (whole). */
static enum MHD_Result generate(struct MHD_Connection *c, const char *model, const cJSON *req,
                                size_t len, bool stream)
{
    if (!req)
        return gemini_error(c, 400, "stand-in: body is not JSON");
    struct prompt p;
    struct answer a;
    enum MHD_Result ret;
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(req, "generationConfig");
    const cJSON *mime = cJSON_GetObjectItemCaseSensitive(config, "responseMimeType");
    gemini_prompt(req, &p);
    script_answer(&p, &gemini_dialect, &a);
    if (!stream && cJSON_IsString(mime) && strcmp(mime->valuestring, "application/json") == 0 &&
        a.kind == ANSWER_TEXT) {
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(config, "responseJsonSchema");
        if (!schema)
            schema = cJSON_GetObjectItemCaseSensitive(config, "responseSchema");
        free(a.text);
        a.text = json_mode_text(schema);
    }
    if (a.kind == ANSWER_HTTP_ERROR) {
        char msg[64];
        snprintf(msg, sizeof msg, "stand-in: scripted HTTP %d", a.status);
        ret = gemini_error(c, a.status, msg);
    } else if (a.kind == ANSWER_FAILED && strcmp(a.code, "context_length_exceeded") == 0) {
        /* The API refuses an overlong prompt before answering. */
        ret = gemini_error(c, 400,
                           "The input token count (1250000) exceeds the maximum number of "
                           "tokens allowed (1048576).");
    } else if (stream) {
        ret = reply_stream(c, gemini_encode(&a, model, len));
    } else if (a.kind == ANSWER_FAILED) {
        char *msg = concat("stand-in: scripted failure: ", a.code);
        ret = gemini_error(c, 500, msg);
        free(msg);
    } else {
        char *json = gemini_whole(&a, model, len);
        ret = reply(c, 200, json);
        free(json);
    }
    answer_release(&a);
    prompt_release(&p);
    return ret;
}

enum MHD_Result serve_gemini(struct MHD_Connection *c, const char *rest, const cJSON *req,
                             size_t len)
{
    const char *colon = strrchr(rest, ':');
    if (!colon)
        return gemini_error(c, 404, "stand-in: no such route");
    char *model = xstrndup(rest, (size_t)(colon - rest));
    const char *method = colon + 1;
    enum MHD_Result ret;
    if (strcmp(method, "streamGenerateContent") == 0) {
        ret = generate(c, model, req, len, true);
    } else if (strcmp(method, "generateContent") == 0) {
        ret = generate(c, model, req, len, false);
    } else if (strcmp(method, "countTokens") == 0) {
        char json[64];
        snprintf(json, sizeof json, "{\"totalTokens\":%zu}", len / 4);
        ret = reply(c, 200, json);
    } else {
        ret = gemini_error(c, 404, "stand-in: no such method");
    }
    free(model);
    return ret;
}
