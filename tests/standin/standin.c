/* SPDX-License-Identifier: MIT */
/*
 * baton-standin: a scripted stand-in for a model endpoint, for offline tests.
 *
 * Real coder CLIs are pointed at this server on 127.0.0.1 instead of a model
 * provider. It speaks four APIs: OpenAI Responses (POST /v1/responses) as
 * codex 0.171.0 uses it, OpenAI Chat Completions (POST /v1/chat/completions,
 * streamed or not) as pi 0.73.1, opencode 1.18.33 and copilot 1.0.102 use
 * it, Anthropic Messages (POST /v1/messages, standin-anthropic.c) as claude
 * 2.1.332 uses it, and the Gemini API (POST /v1beta/models/<m>:<method>,
 * standin-gemini.c) as gemini-cli 0.61.0 uses it. What it answers is chosen
 * by directives in the text of the last user message (see script_answer): an
 * echo, a shell or file-writing tool call, a slow stream, an HTTP error, a
 * failed stream, reasoning, a large answer. --log records every request body
 * so tests can check what the client sent (e.g. that a resumed turn carries
 * the earlier history).
 *
 * Layout: the script (what to answer, struct answer) does not know the wire
 * format; each API has a prompt extractor, a dialect (the names of its
 * client's tools), an encoder and one line in the route table. This file
 * holds the script and the server; standin-responses.c, standin-chat.c,
 * standin-anthropic.c and standin-gemini.c the APIs.
 *
 * Threading: libmicrohttpd runs one thread per connection, so a slow stream
 * simply sleeps between events; the main thread waits for SIGTERM or SIGINT.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cJSON.h>
#include <microhttpd.h>

#include "standin.h"

#define MAX_BODY ((size_t)32 * 1024 * 1024) /* largest request body accepted */
#define MAX_LARGE ((long)16 * 1024 * 1024)  /* largest [[large:N]] answer */
#define LARGE_CHUNK 1024                    /* bytes per delta of [[large:N]] */
#define SLOW_DELTAS 300                     /* [[slow]]: 300 deltas ... */
#define SLOW_DELAY_MS 200                   /* ... 200 ms apart: about 60 s */
#define SLOW_TICK 10                        /* bytes of one "tick 001. " delta */

static atomic_bool g_stopping; /* set on SIGTERM/SIGINT: end streams */
atomic_ulong g_requests;       /* request counter, makes ids unique */
static FILE *g_log;            /* --log file or NULL */
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- memory and a growable byte buffer ---------------------------------- */

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("baton-standin: out of memory\n", stderr);
        abort();
    }
    return q;
}

char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void sbuf_add(struct sbuf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sbuf_adds(struct sbuf *b, const char *s)
{
    sbuf_add(b, s, strlen(s));
}

/* Take the bytes (never NULL); the buffer is empty afterwards. */
char *sbuf_detach(struct sbuf *b)
{
    char *d = b->data ? b->data : xstrndup("", 0);
    *b = (struct sbuf){0};
    return d;
}

/* ---- the script: what to answer, independent of the wire format --------- */

void tool_decls_add(struct tool_decls *t, const char *name, const cJSON *properties)
{
    t->items = xrealloc(t->items, (t->count + 1) * sizeof *t->items);
    t->items[t->count++] = (struct tool_decl){name, properties};
}

void tool_decls_release(struct tool_decls *t)
{
    free(t->items);
    *t = (struct tool_decls){0};
}

static bool declares(const struct tool_decls *t, const char *name, const char *arg)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->items[i].name, name) == 0)
            return cJSON_GetObjectItemCaseSensitive(t->items[i].properties, arg) != NULL;
    return false;
}

const struct dialect *dialect_pick(const struct tool_decls *t, const struct dialect *const *known,
                                   const struct dialect *fallback)
{
    for (; *known; known++)
        if (declares(t, (*known)->shell_tool, (*known)->shell_arg) &&
            declares(t, (*known)->write_tool, (*known)->write_path))
            return *known;
    return fallback;
}

void prompt_unwrap(char *user)
{
    static const char open[] = "<current_datetime>", close[] = "</current_datetime>";
    if (strncmp(user, open, sizeof open - 1) != 0)
        return;
    const char *end = strstr(user, close);
    if (!end)
        return;
    end += sizeof close - 1;
    end += strspn(end, "\n");
    memmove(user, end, strlen(end) + 1);
}

void answer_release(struct answer *a)
{
    free(a->reasoning);
    free(a->text);
    free(a->tool_name);
    free(a->tool_args);
    free(a->code);
    *a = (struct answer){0};
}

void prompt_release(struct prompt *p)
{
    free(p->user);
    free(p->tool_output);
    *p = (struct prompt){0};
}

char *concat(const char *a, const char *b)
{
    struct sbuf s = {0};
    sbuf_adds(&s, a);
    sbuf_adds(&s, b);
    return sbuf_detach(&s);
}

/*
 * The first line of a tool's output worth quoting. codex wraps command output
 * in a header ("Chunk ID: …\nOutput:\n…"), so quote the first line after an
 * "Output:" line when there is one.
 */
char *first_output_line(const char *out)
{
    const char *p = strstr(out, "Output:\n");
    if (p && (p == out || p[-1] == '\n'))
        out = p + strlen("Output:\n");
    return xstrndup(out, strcspn(out, "\n"));
}

/* Find "[[name" + ":"arg or "]]" in s; return the argument (maybe "") or NULL. */
static char *directive(const char *s, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(s, "[["); p; p = strstr(p + 2, "[[")) {
        const char *q = p + 2;
        if (strncmp(q, name, n) != 0)
            continue;
        q += n;
        if (strncmp(q, "]]", 2) == 0)
            return xstrndup("", 0);
        const char *end = strstr(q, "]]");
        if (*q == ':' && end)
            return xstrndup(q + 1, (size_t)(end - q - 1));
    }
    return NULL;
}

/* Parse a decimal in [lo, hi]; -1 if s is not one. */
static long parse_num(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

/* `n` bytes of numbered ASCII lines, so a client can check nothing was lost. */
static char *large_text(size_t n)
{
    struct sbuf s = {0};
    char line[80];
    for (unsigned long i = 1; s.len < n; i++) {
        /* 64 bytes a line */
        int k = snprintf(line, sizeof line, "%08lu %s\n", i,
                         "baton large answer line, padded to 64 bytes ..........");
        sbuf_add(&s, line, (size_t)k);
    }
    char *t = sbuf_detach(&s);
    t[n] = '\0';
    return t;
}

/* [[slow]]'s text: n ticks, one a delta. */
static char *slow_text(long n)
{
    struct sbuf s = {0};
    char tick[32];
    for (long i = 1; i <= n; i++) {
        int k = snprintf(tick, sizeof tick, "tick %03ld. ", i); /* SLOW_TICK bytes */
        sbuf_add(&s, tick, (size_t)k);
    }
    return sbuf_detach(&s);
}

static void answer_text(struct answer *a, char *text, size_t chunk)
{
    a->kind = ANSWER_TEXT;
    a->text = text;
    a->chunk = chunk;
}

/* [[shell:CMD]]: the dialect's shell tool with {shell_arg: CMD}. */
static void answer_shell(struct answer *a, const struct dialect *d, const char *cmd)
{
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, d->shell_arg, cmd);
    a->kind = ANSWER_TOOL_CALL;
    a->tool_name = xstrndup(d->shell_tool, strlen(d->shell_tool));
    a->tool_args = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
}

/* [[write:PATH]]: a one-line file, through codex's freeform apply_patch tool
 * or through a {"path","content"} tool such as pi's write. */
static void answer_write(struct answer *a, const struct dialect *d, const char *path)
{
    a->kind = ANSWER_TOOL_CALL;
    a->tool_name = xstrndup(d->write_tool, strlen(d->write_tool));
    if (d->write_patch) {
        struct sbuf patch = {0};
        sbuf_adds(&patch, "*** Begin Patch\n*** Add File: ");
        sbuf_adds(&patch, path);
        sbuf_adds(&patch, "\n+written by baton-standin\n*** End Patch\n");
        a->custom = true;
        a->tool_args = sbuf_detach(&patch);
    } else {
        cJSON *args = cJSON_CreateObject();
        cJSON_AddStringToObject(args, d->write_path, path);
        cJSON_AddStringToObject(args, d->write_text ? d->write_text : "content",
                                "written by baton-standin\n");
        a->tool_args = cJSON_PrintUnformatted(args);
        cJSON_Delete(args);
    }
}

/* [[ask:QUESTION]]: claude's AskUserQuestion tool (Claude Code 2.1.332)
 * asking QUESTION with two options, whatever the dialect (only claude
 * has that tool). */
static void answer_ask(struct answer *a, const char *question)
{
    cJSON *args = cJSON_CreateObject();
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "question", question);
    cJSON_AddStringToObject(q, "header", "Choice");
    cJSON *opts = cJSON_AddArrayToObject(q, "options");
    static const char *const labels[][2] = {{"Yes", "go on"}, {"No", "stop here"}};
    for (size_t i = 0; i < 2; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", labels[i][0]);
        cJSON_AddStringToObject(o, "description", labels[i][1]);
        cJSON_AddItemToArray(opts, o);
    }
    cJSON_AddBoolToObject(q, "multiSelect", 0);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(args, "questions"), q);
    a->kind = ANSWER_TOOL_CALL;
    a->tool_name = xstrndup("AskUserQuestion", strlen("AskUserQuestion"));
    a->tool_args = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
}

/* Directives that take an argument; 0 if none matched. */
static int script_arg_directive(const char *user, const struct dialect *d, struct answer *a)
{
    char *arg;
    long v;
    if ((arg = directive(user, "shell"))) {
        answer_shell(a, d, arg);
    } else if ((arg = directive(user, "write"))) {
        answer_write(a, d, arg);
    } else if ((arg = directive(user, "ask"))) {
        answer_ask(a, arg);
    } else if ((arg = directive(user, "large")) && (v = parse_num(arg, 0, MAX_LARGE)) >= 0) {
        answer_text(a, large_text((size_t)v), LARGE_CHUNK);
    } else if (arg) {
        answer_text(a, concat("Bad directive, you said: ", user), ECHO_CHUNK);
    } else if ((arg = directive(user, "failed"))) {
        a->kind = ANSWER_FAILED;
        a->code = xstrndup(arg, strlen(arg));
    } else {
        return 0;
    }
    free(arg);
    return 1;
}

/* [[httpNNN]]: HTTP status NNN (400..599); 0 if absent. */
static int script_http_status(const char *user)
{
    for (const char *p = strstr(user, "[[http"); p; p = strstr(p + 2, "[[http")) {
        char digits[4] = {0};
        if (sscanf(p, "[[http%3[0-9]]]", digits) == 1 && strncmp(p + 9, "]]", 2) == 0) {
            long v = parse_num(digits, 400, 599);
            if (v > 0)
                return (int)v;
        }
    }
    return 0;
}

/*
 * Decide the answer to a request. Consumes nothing; fills *a (release it with
 * answer_release). Tool names come from the dialect `d` (codex / pi / claude).
 * Directives in the last user message, first match wins:
 *   a tool output after it  → text "Tool output: <its first line>"
 *   [[shell:CMD]]           → exec_command {"cmd":CMD} / bash or Bash {"command":CMD}
 *   [[write:PATH]]          → apply_patch adding PATH / write {"path","content"}
 *   [[ask:QUESTION]]        → AskUserQuestion {questions: [QUESTION, header
 *                             "Choice", options Yes and No]} (claude's tool)
 *   [[large:N]]             → N bytes of text in 1 KiB deltas
 *   [[failed:CODE]]         → the stream fails with error code CODE
 *                             (response.failed / an error chunk)
 *   [[httpNNN]]             → HTTP NNN with a JSON error body; with
 *                             [[retry-after-ms:N]] also that header (Chat
 *                             Completions and Responses), which opencode
 *                             honours: its 5 retries then take N ms each
 *   [[slow]]                → 300 deltas 200 ms apart
 *   [[slow:N]]              → N deltas (1..300) 200 ms apart
 *   [[reasoning]]           → reasoning first (a summary / reasoning_content
 *                             deltas), then the echo
 *   anything else           → "Hello! You said: <prompt>" in short deltas
 */
void script_answer(const struct prompt *p, const struct dialect *d, struct answer *a)
{
    *a = (struct answer){0};
    char *arg;
    int status;
    if (p->tool_output) {
        char *line = first_output_line(p->tool_output);
        answer_text(a, concat("Tool output: ", line), ECHO_CHUNK);
        free(line);
    } else if (script_arg_directive(p->user, d, a)) {
        return;
    } else if ((status = script_http_status(p->user))) {
        a->kind = ANSWER_HTTP_ERROR;
        a->status = status;
        if ((arg = directive(p->user, "retry-after-ms"))) {
            a->retry_after_ms = (int)parse_num(arg, 1, 60000);
            free(arg);
        }
    } else if ((arg = directive(p->user, "slow"))) {
        /* [[slow:N]]: N ticks (a turn a steer can reach while it streams) */
        long n = arg[0] ? parse_num(arg, 1, SLOW_DELTAS) : SLOW_DELTAS;
        answer_text(a, slow_text(n > 0 ? n : SLOW_DELTAS), SLOW_TICK);
        a->delay_ms = SLOW_DELAY_MS;
        free(arg);
    } else {
        if ((arg = directive(p->user, "reasoning"))) {
            a->reasoning = concat("Thinking about: ", p->user);
            free(arg);
        }
        answer_text(a, concat("Hello! You said: ", p->user), ECHO_CHUNK);
    }
}

/* Length of the next delta of `s`: at most `chunk` bytes, never inside a UTF-8
 * sequence (a split sequence would make the JSON of both deltas invalid). */
size_t utf8_chunk(const char *s, size_t chunk)
{
    size_t n = strnlen(s, chunk);
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    if (n == 0) /* one code point longer than chunk: take it whole */
        for (n = 1; ((unsigned char)s[n] & 0xC0) == 0x80; n++)
            ;
    return n;
}

/* ---- a prepared event stream, replayed to the client -------------------- */

void stream_add(struct stream *s, const char *frame, size_t len, unsigned delay_ms)
{
    if (s->count == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->marks = xrealloc(s->marks, s->cap * sizeof *s->marks);
    }
    sbuf_add(&s->data, frame, len);
    s->marks[s->count++] = (struct frame_mark){s->data.len, delay_ms};
}

void sse_emit(struct stream *s, bool named, cJSON *obj, const char *eol, unsigned delay_ms)
{
    char *json = cJSON_PrintUnformatted(obj);
    struct sbuf f = {0};
    if (named) {
        sbuf_adds(&f, "event: ");
        sbuf_adds(&f, cJSON_GetObjectItemCaseSensitive(obj, "type")->valuestring);
        sbuf_adds(&f, eol);
    }
    sbuf_adds(&f, "data: ");
    sbuf_adds(&f, json);
    sbuf_adds(&f, eol);
    sbuf_adds(&f, eol);
    stream_add(s, f.data, f.len, delay_ms);
    free(f.data);
    free(json);
    cJSON_Delete(obj);
}

static void stream_free(void *cls)
{
    struct stream *s = cls;
    free(s->data.data);
    free(s->marks);
    free(s);
}

/* Sleep, in short slices so that shutdown is not held up; false if stopping. */
static bool nap(unsigned ms)
{
    while (ms > 0 && !atomic_load(&g_stopping)) {
        unsigned step = ms < 50 ? ms : 50;
        struct timespec ts = {0, (long)step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return !atomic_load(&g_stopping);
}

/* MHD content reader: hand out the current frame, pausing before it if asked.
 * One frame per call, so each event leaves as its own chunk. A client that
 * went away makes MHD stop calling and free the stream. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    (void)pos;
    if (s->next == s->count)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t start = s->next ? s->marks[s->next - 1].end : 0;
    if (s->pos == start && !nap(s->marks[s->next].delay_ms))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = s->marks[s->next].end - s->pos;
    if (n > max)
        n = max;
    memcpy(buf, s->data.data + s->pos, n);
    s->pos += n;
    if (s->pos == s->marks[s->next].end)
        s->next++;
    return (ssize_t)n;
}

/* ---- shared by the wire encoders ------------------------------------- */

/* Text of a message's content: a string, or an array of parts with "text". */
void content_text(const cJSON *content, struct sbuf *out)
{
    const cJSON *part;
    if (cJSON_IsString(content)) {
        sbuf_adds(out, content->valuestring);
        return;
    }
    cJSON_ArrayForEach(part, content)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(t))
            sbuf_adds(out, t->valuestring);
    }
}

struct usage usage_of(size_t body_len, const struct answer *a)
{
    /* about four bytes a token, in whole tokens */
    size_t in_tokens = body_len / 4;
    size_t reasoning_tokens = a->reasoning ? strlen(a->reasoning) / 4 + 1 : 0;
    size_t text_tokens = a->text ? strlen(a->text) / 4 : 0;
    size_t cached_tokens = in_tokens / 2; /* as if half the prompt were cached */
    return (struct usage){
        .input = (double)in_tokens,
        .cached = (double)cached_tokens,
        .output = (double)text_tokens + 1 + (double)reasoning_tokens,
        .reasoning = (double)reasoning_tokens,
    };
}

/* ---- HTTP ---------------------------------------------------------------- */

/* Per-request state, kept by MHD between calls of the access handler. */
struct request {
    struct sbuf body; /* upload so far */
    bool too_large;   /* body exceeded MAX_BODY: answer 413 */
};

/* A JSON reply, with a retry-after-ms header when retry_ms > 0. */
static enum MHD_Result reply_retry(struct MHD_Connection *c, unsigned status, const char *json,
                                   int retry_ms)
{
    struct MHD_Response *rsp =
        MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(rsp, "Content-Type", "application/json");
    if (retry_ms > 0) {
        char ms[16];
        snprintf(ms, sizeof ms, "%d", retry_ms);
        MHD_add_response_header(rsp, "retry-after-ms", ms);
    }
    enum MHD_Result ret = MHD_queue_response(c, status, rsp);
    MHD_destroy_response(rsp);
    return ret;
}

enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *json)
{
    return reply_retry(c, status, json, 0);
}

static enum MHD_Result error_body(struct MHD_Connection *c, unsigned status, const char *type,
                                  const char *code, const char *message, int retry_ms)
{
    cJSON *body = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(body, "error");
    cJSON_AddStringToObject(err, "message", message);
    cJSON_AddStringToObject(err, "type", type);
    cJSON_AddNullToObject(err, "param");
    cJSON_AddStringToObject(err, "code", code);
    char *json = cJSON_PrintUnformatted(body);
    enum MHD_Result ret = reply_retry(c, status, json, retry_ms);
    free(json);
    cJSON_Delete(body);
    return ret;
}

/* An OpenAI-style error body: {"error":{message,type,param,code}}. */
enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *type,
                            const char *code, const char *message)
{
    return error_body(c, status, type, code, message, 0);
}

enum MHD_Result reply_scripted_error(struct MHD_Connection *c, const struct answer *a)
{
    char msg[64];
    int status = a->status;
    snprintf(msg, sizeof msg, "stand-in: scripted HTTP %d", status);
    if (status == 429)
        return error_body(c, 429, "requests", "rate_limit_exceeded", msg, a->retry_after_ms);
    if (status >= 500)
        return error_body(c, (unsigned)status, "server_error", "server_error", msg,
                          a->retry_after_ms);
    return error_body(c, (unsigned)status, "invalid_request_error", "invalid_request", msg,
                      a->retry_after_ms);
}

enum MHD_Result reply_stream(struct MHD_Connection *c, struct stream *s)
{
    struct MHD_Response *rsp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, (size_t)64 * 1024, stream_read, s, stream_free);
    MHD_add_response_header(rsp, "Content-Type", "text/event-stream");
    MHD_add_response_header(rsp, "Cache-Control", "no-cache");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, rsp);
    MHD_destroy_response(rsp);
    return ret;
}

/* GET /v1/models: an OpenAI-style list with one entry. */
static enum MHD_Result serve_models(struct MHD_Connection *c, const cJSON *req, size_t len)
{
    (void)req;
    (void)len;
    return reply(c, 200,
                 "{\"object\":\"list\",\"data\":[{\"id\":\"baton-test\",\"object\":\"model\","
                 "\"created\":0,\"owned_by\":\"baton\"}]}");
}

typedef enum MHD_Result (*route_fn)(struct MHD_Connection *c, const cJSON *req, size_t len);

/* Paths are matched after removing a leading "/v1". */
static const struct route {
    const char *method; /* HTTP method */
    const char *path;   /* exact path, without query */
    route_fn serve;     /* handler; `req` is the parsed body or NULL */
} routes[] = {
    {"POST", "/responses", serve_responses},
    {"POST", "/chat/completions", serve_chat},
    {"GET", "/models", serve_models},
    {"POST", "/messages", serve_anthropic_messages},
    {"POST", "/messages/count_tokens", serve_anthropic_count_tokens},
};

/* Append {"method","path","body"} as one line to the log (body may be NULL). */
static void log_request(const char *method, const char *path, const cJSON *body)
{
    if (!g_log)
        return;
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "method", method);
    cJSON_AddStringToObject(line, "path", path);
    if (body)
        cJSON_AddItemReferenceToObject(line, "body", (cJSON *)body);
    else
        cJSON_AddNullToObject(line, "body");
    char *json = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    pthread_mutex_lock(&g_log_lock);
    fprintf(g_log, "%s\n", json);
    fflush(g_log);
    pthread_mutex_unlock(&g_log_lock);
    free(json);
}

static enum MHD_Result dispatch(struct MHD_Connection *c, const char *url, const char *method,
                                struct request *rq)
{
    if (rq->too_large)
        return reply_error(c, 413, "invalid_request_error", "body_too_large",
                           "stand-in: request body too large");
    cJSON *body = rq->body.len ? cJSON_ParseWithLength(rq->body.data, rq->body.len) : NULL;
    log_request(method, url, body);
    const char *path = strncmp(url, "/v1/", 4) == 0 ? url + 3 : url;
    enum MHD_Result ret = MHD_NO;
    bool found = false;
    static const char gemini[] = "/v1beta/models/"; /* + "<model>:<method>" */
    if (strcmp(method, "POST") == 0 && strncmp(url, gemini, sizeof gemini - 1) == 0) {
        ret = serve_gemini(c, url + sizeof gemini - 1, body, rq->body.len);
        found = true;
    }
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !found; i++) {
        if (strcmp(routes[i].method, method) == 0 && strcmp(routes[i].path, path) == 0) {
            ret = routes[i].serve(c, body, rq->body.len);
            found = true;
        }
    }
    if (!found)
        ret = reply_error(c, 404, "invalid_request_error", "not_found", "stand-in: no such route");
    cJSON_Delete(body);
    return ret;
}

/* MHD access handler: collect the body over several calls, then dispatch. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct request *rq = *req_cls;
    (void)cls;
    (void)version;
    if (!rq) {
        rq = xrealloc(NULL, sizeof *rq);
        *rq = (struct request){0};
        *req_cls = rq;
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->body.len + *upload_size > MAX_BODY)
            rq->too_large = true;
        else
            sbuf_add(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(c, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct request *rq = *req_cls;
    (void)cls;
    (void)c;
    (void)toe;
    if (rq) {
        free(rq->body.data);
        free(rq);
        *req_cls = NULL;
    }
}

/* ---- main ---------------------------------------------------------------- */

struct options {
    long port;             /* --port, 0 = any free port */
    const char *log;       /* --log FILE or NULL */
    const char *port_file; /* --port-file FILE or NULL */
};

static int usage(void)
{
    fputs("usage: baton-standin [--port N] [--log FILE] [--port-file FILE]\n", stderr);
    return 2;
}

/* Value of option `name` at argv[*i] ("--name V" or "--name=V"), or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (*i >= argc || !argv[*i] || strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == '\0' && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = opt_value(argc, argv, &i, "--port"))) {
            if ((o->port = parse_num(v, 0, 65535)) < 0)
                return -1;
        } else if ((v = opt_value(argc, argv, &i, "--log"))) {
            o->log = v;
        } else if ((v = opt_value(argc, argv, &i, "--port-file"))) {
            o->port_file = v;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Write the port to `path` through a temporary file, so a reader polling for
 * the file never sees it half written. */
static int write_port_file(const char *path, unsigned port)
{
    char *tmp = concat(path, ".tmp");
    FILE *f = fopen(tmp, "w");
    int ok = f && fprintf(f, "%u\n", port) > 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "baton-standin: cannot write port file '%s': %s\n", path, strerror(errno));
    free(tmp);
    return ok ? 0 : -1;
}

static struct MHD_Daemon *start_daemon(long port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                MHD_USE_POLL | MHD_USE_ERROR_LOG,
                            0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                            NULL, MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_END);
}

/* Block SIGINT/SIGTERM in every thread (the MHD threads inherit the mask) so
 * the main thread can sigwait for them; ignore SIGPIPE from closed peers. */
static void setup_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int serve(const struct options *o)
{
    sigset_t set;
    int sig;
    setup_signals(&set);
    struct MHD_Daemon *d = start_daemon(o->port);
    if (!d) {
        fprintf(stderr, "baton-standin: cannot listen on 127.0.0.1:%ld\n", o->port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : (unsigned)o->port;
    printf("listening http://127.0.0.1:%u\n", port);
    fflush(stdout);
    int rc = 0;
    if (o->port_file && write_port_file(o->port_file, port) != 0)
        rc = 1;
    while (rc == 0 && sigwait(&set, &sig) != 0)
        ;
    atomic_store(&g_stopping, true);
    MHD_stop_daemon(d);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse_options(argc, argv, &o) != 0)
        return usage();
    if (o.log && !(g_log = fopen(o.log, "a"))) {
        fprintf(stderr, "baton-standin: cannot open log '%s': %s\n", o.log, strerror(errno));
        return 1;
    }
    int rc = serve(&o);
    if (g_log)
        fclose(g_log);
    return rc;
}
