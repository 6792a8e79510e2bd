/* SPDX-License-Identifier: MIT */
/*
 * standin.h: what the wire encoders of baton-standin share: byte buffers,
 * the wire-independent script (struct answer, script_answer), prepared SSE
 * streams and HTTP replies. standin.c holds the script and the server;
 * standin-responses.c the OpenAI Responses API, standin-chat.c the Chat
 * Completions API,
 * standin-anthropic.c the Anthropic Messages API, standin-gemini.c the
 * Gemini API. Every allocation failure aborts (xrealloc).
 */
#ifndef BATON_STANDIN_H
#define BATON_STANDIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>
#include <microhttpd.h>

#define ECHO_CHUNK 8 /* bytes per delta of short answers */

extern atomic_ulong g_requests; /* request counter, makes ids unique */

struct sbuf {
    char *data; /* NULL until the first add; NUL-terminated after it */
    size_t len; /* bytes used */
    size_t cap; /* bytes allocated */
};

enum answer_kind {
    ANSWER_TEXT,       /* stream `text` as message deltas */
    ANSWER_TOOL_CALL,  /* one function call (or freeform custom tool call) */
    ANSWER_HTTP_ERROR, /* no stream: HTTP `status` with a JSON error body */
    ANSWER_FAILED,     /* stream starts, then fails with error `code` */
};

struct answer {
    enum answer_kind kind;
    char *reasoning;    /* reasoning summary streamed before the text, or NULL */
    char *text;         /* ANSWER_TEXT: the whole message */
    size_t chunk;       /* ANSWER_TEXT: bytes per delta (UTF-8 safe) */
    unsigned delay_ms;  /* ANSWER_TEXT: pause before every delta but the first */
    char *tool_name;    /* ANSWER_TOOL_CALL: function name */
    char *tool_args;    /* ANSWER_TOOL_CALL: arguments, JSON text (freeform input if custom) */
    bool custom;        /* ANSWER_TOOL_CALL: a freeform tool such as codex's apply_patch */
    int status;         /* ANSWER_HTTP_ERROR: HTTP status */
    int retry_after_ms; /* ANSWER_HTTP_ERROR: a retry-after-ms header when > 0 */
    char *code;         /* ANSWER_FAILED: error code, e.g. context_length_exceeded */
};

/* The tools of the client behind one wire format, which the script's tool
 * calls must name. */
struct dialect {
    const char *shell_tool; /* tool that runs a shell command */
    const char *shell_arg;  /* its argument holding the command */
    const char *write_tool; /* tool that writes a file */
    bool write_patch;       /* write_tool is freeform apply_patch text (codex);
                               else it takes {write_path, "content"} */
    const char *write_path; /* that tool's path argument: "path" (pi),
                               "file_path" (claude); unused with write_patch */
    const char *write_text; /* that tool's text argument; NULL: "content" */
};

/* One tool a request declares: its name and the "properties" object of its
 * parameter schema (NULL if it has none), both borrowed from the request. */
struct tool_decl {
    const char *name;
    const cJSON *properties;
};

/* Tools declared by a request, as a wire's extractor collects them. */
struct tool_decls {
    struct tool_decl *items; /* owned; free with tool_decls_release */
    size_t count;
};

/* What the script looks at, extracted from a request by a wire's extractor. */
struct prompt {
    char *user;        /* text of the last user message ("" if none) */
    char *tool_output; /* output of a tool call answered after it, or NULL */
};

struct frame_mark {
    size_t end;        /* offset in stream.data just after this frame */
    unsigned delay_ms; /* pause before sending this frame */
};

struct stream {
    struct sbuf data;         /* all frames, back to back */
    struct frame_mark *marks; /* one per frame, in order */
    size_t count;             /* frames */
    size_t cap;               /* marks allocated */
    size_t next;              /* frame being sent */
    size_t pos;               /* bytes of data sent */
};

/* Token counts of one answer, made up but deterministic. */
struct usage {
    double input;     /* request body bytes / 4 */
    double cached;    /* half the input, so clients' cached-token handling has
                         something to show */
    double output;    /* text bytes / 4 + 1, plus the reasoning tokens */
    double reasoning; /* reasoning bytes / 4 + 1, or 0 */
};

/* Memory: abort on failure. xstrndup copies n bytes and adds a NUL. */
void *xrealloc(void *p, size_t n);
char *xstrndup(const char *s, size_t n);
void sbuf_add(struct sbuf *b, const void *p, size_t n);
void sbuf_adds(struct sbuf *b, const char *s);
char *sbuf_detach(struct sbuf *b);          /* the bytes (never NULL); b is empty after */
char *concat(const char *a, const char *b); /* a new string a+b */

/* Add a declared tool (name and properties borrowed). */
void tool_decls_add(struct tool_decls *t, const char *name, const cJSON *properties);
void tool_decls_release(struct tool_decls *t);
/* The first of the NULL-terminated `known` dialects whose shell tool (with
 * its command argument) and write tool (with its path argument) the request
 * declares; `fallback` when none matches (e.g. a request without tools). */
const struct dialect *dialect_pick(const struct tool_decls *t, const struct dialect *const *known,
                                   const struct dialect *fallback);
/* Drop what a client wraps around the typed prompt: a leading
 * <current_datetime>…</current_datetime> block (copilot 1.0.102) and the
 * blank lines after it. Edits the string in place. */
void prompt_unwrap(char *user);

/* Fill *a with the answer to prompt *p, tools named after dialect *d. */
void script_answer(const struct prompt *p, const struct dialect *d, struct answer *a);
void answer_release(struct answer *a);
void prompt_release(struct prompt *p);
/* The first line of a tool's output worth quoting (new string). */
char *first_output_line(const char *out);
/* Append the text of a message content (a string, or parts with "text"). */
void content_text(const cJSON *content, struct sbuf *out);
/* Bytes of the next delta of s: at most chunk, never inside UTF-8. */
size_t utf8_chunk(const char *s, size_t chunk);
struct usage usage_of(size_t body_len, const struct answer *a);

/* Append one frame (copied) sent after delay_ms. */
void stream_add(struct stream *s, const char *frame, size_t len, unsigned delay_ms);
/* Append `obj` (consumed) as one SSE frame sent after delay_ms: "event:
 * <its "type">" first when `named`, then "data: <JSON>", each line ended by
 * `eol` ("\n", or "\r\n" as the Gemini API sends), and an empty line. */
void sse_emit(struct stream *s, bool named, cJSON *obj, const char *eol, unsigned delay_ms);

/* HTTP replies: a JSON body (copied); an OpenAI-style error; an SSE stream
 * (taken: freed by the server when the response ends). */
enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *json);
enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *type,
                            const char *code, const char *message);
enum MHD_Result reply_stream(struct MHD_Connection *c, struct stream *s);
/* The OpenAI-style error body of a scripted [[httpNNN]]: 429
 * rate_limit_exceeded, 5xx server_error, else invalid_request. */
enum MHD_Result reply_scripted_error(struct MHD_Connection *c, const struct answer *a);

/* standin-responses.c: POST /v1/responses; req is the parsed body or NULL,
 * len its size in bytes. */
enum MHD_Result serve_responses(struct MHD_Connection *c, const cJSON *req, size_t len);

/* standin-chat.c: POST /v1/chat/completions; req is the parsed body or
 * NULL, len its size in bytes. */
enum MHD_Result serve_chat(struct MHD_Connection *c, const cJSON *req, size_t len);

/* standin-anthropic.c: POST /v1/messages and /v1/messages/count_tokens;
 * req is the parsed body or NULL, len its size in bytes. */
enum MHD_Result serve_anthropic_messages(struct MHD_Connection *c, const cJSON *req, size_t len);
enum MHD_Result serve_anthropic_count_tokens(struct MHD_Connection *c, const cJSON *req,
                                             size_t len);

/* standin-gemini.c: POST /v1beta/models/<model>:<method>; `rest` is the path
 * after "/v1beta/models/" (the query, e.g. "?alt=sse", is not part of it). */
enum MHD_Result serve_gemini(struct MHD_Connection *c, const char *rest, const cJSON *req,
                             size_t len);

#endif
