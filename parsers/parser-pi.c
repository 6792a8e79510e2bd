/* SPDX-License-Identifier: MIT */
/*
 * pi parser: maps pi rpc lines to normalized events and to signals for the
 * pi runner. See parser-pi.h for the protocol source.
 */
#include "parser-pi.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jscan.h"
#include "json.h"
#include "parser-pi-error.h"

struct tool_out {
    char *id;      /* toolCallId */
    char *command; /* bash: its command line; a file tool: its path (for the completed item) */
    size_t sent;   /* bytes of its accumulated output already emitted */
};

struct pi_parser {
    int message;            /* assistant messages so far (item ids) */
    char *stop_reason;      /* of the last assistant message */
    char *error_message;    /* of the last assistant message that failed */
    struct bt_usage usage;  /* sums over the turn */
    int64_t context_window; /* from get_state */
    int settles;            /* pi 1.x (the prompt's response has data.disposition): the turn
                               ends at agent_settled, not at agent_end */
    int ended;              /* a definite end was signalled */
    struct tool_out tools[8];
    struct bt_buf text; /* scratch: a decoded delta or block text */
    struct bt_buf word; /* scratch: a decoded type name */
};

static void *pi_create(void)
{
    struct pi_parser *p = bt_xcalloc(1, sizeof(*p));
    bt_usage_init(&p->usage);
    p->context_window = BT_UNKNOWN;
    bt_buf_init(&p->text);
    bt_buf_init(&p->word);
    return p;
}

static void pi_destroy(void *st)
{
    struct pi_parser *p = st;
    if (!p)
        return;
    free(p->stop_reason);
    free(p->error_message);
    for (size_t i = 0; i < BT_ARRAY_SIZE(p->tools); i++) {
        free(p->tools[i].id);
        free(p->tools[i].command);
    }
    bt_buf_release(&p->text);
    bt_buf_release(&p->word);
    free(p);
}

/* ---- message_update: text and thinking blocks ----------------------- */

/* What one assistantMessageEvent says. Strings point into p->text or the
 * line and live for the call. */
struct update {
    char type[32];
    int64_t index;
    const char *text; /* delta, or the whole block for *_end */
    size_t text_len;
    int has_text;
};

static void emit_block(struct pi_parser *p, const struct update *u,
                       const struct bt_parser_sink *sink)
{
    int thinking = strncmp(u->type, "thinking_", 9) == 0;
    const char *what = u->type + (thinking ? 9 : 5);
    char id[48];
    snprintf(id, sizeof(id), "%s-%d-%lld", thinking ? "think" : "msg", p->message,
             (long long)u->index);
    struct bt_event ev;
    enum bt_event_type type = strcmp(what, "start") == 0   ? BT_EVENT_ITEM_STARTED
                              : strcmp(what, "delta") == 0 ? BT_EVENT_ITEM_DELTA
                                                           : BT_EVENT_ITEM_COMPLETED;
    bt_event_init(&ev, type);
    ev.item.id = id;
    ev.item.kind = thinking ? BT_ITEM_REASONING : BT_ITEM_MESSAGE;
    if (type == BT_EVENT_ITEM_DELTA) {
        if (!u->has_text)
            return;
        ev.delta = u->text;
        ev.delta_len = u->text_len;
    } else if (type == BT_EVENT_ITEM_COMPLETED) {
        ev.item.status = "completed";
        ev.item.text = u->has_text ? u->text : NULL;
        ev.item.text_len = u->text_len;
    } else {
        ev.item.status = "in_progress";
    }
    sink->event(sink->data, &ev);
}

static void progress(const struct bt_parser_sink *sink)
{
    struct bt_signal sig = {.type = BT_SIGNAL_PROGRESS};
    sink->signal(sink->data, &sig);
}

/* text_* and thinking_* are items. toolcall_*: the tool_execution_* events
 * describe the call, but the model streaming its arguments (a whole file,
 * for write) is progress; so are start and done of a response; error is
 * not. message_start and message_end carry the rest. */
static void on_update(struct pi_parser *p, const struct update *u,
                      const struct bt_parser_sink *sink)
{
    if (strncmp(u->type, "text_", 5) == 0 || strncmp(u->type, "thinking_", 9) == 0)
        emit_block(p, u, sink);
    else if (strncmp(u->type, "toolcall_", 9) == 0 || strcmp(u->type, "start") == 0 ||
             strcmp(u->type, "done") == 0)
        progress(sink);
}

/* The fast path: walk the line with jscan, skipping the partial messages.
 * Returns -1 when the line is not the expected shape (cJSON then reads it). */
static int scan_event(struct pi_parser *p, struct bt_jscan *s, struct update *u)
{
    const char *k;
    size_t kn;
    int r;
    if (bt_jscan_object(s))
        return -1;
    while ((r = bt_jscan_member(s, &k, &kn)) == 1) {
        int rc;
        if (bt_jscan_key_is(k, kn, "type")) {
            bt_buf_reset(&p->word);
            rc = bt_jscan_string(s, &p->word);
            if (rc == 0)
                snprintf(u->type, sizeof(u->type), "%s", p->word.data);
        } else if (bt_jscan_key_is(k, kn, "contentIndex")) {
            rc = bt_jscan_int(s, &u->index);
        } else if (bt_jscan_key_is(k, kn, "delta") || bt_jscan_key_is(k, kn, "content")) {
            bt_buf_reset(&p->text);
            rc = bt_jscan_string(s, &p->text);
            u->has_text = rc == 0;
        } else {
            rc = bt_jscan_skip(s);
        }
        if (rc)
            return -1;
    }
    return r;
}

static int update_fast(struct pi_parser *p, const char *json, size_t len,
                       const struct bt_parser_sink *sink)
{
    struct bt_jscan s;
    struct update u = {.index = 0};
    const char *k;
    size_t kn;
    int r, found = 0;
    bt_jscan_init(&s, json, len);
    if (bt_jscan_object(&s))
        return -1;
    while ((r = bt_jscan_member(&s, &k, &kn)) == 1) {
        if (bt_jscan_key_is(k, kn, "assistantMessageEvent")) {
            if (scan_event(p, &s, &u))
                return -1;
            found = 1;
        } else if (bt_jscan_skip(&s)) {
            return -1;
        }
    }
    if (r < 0 || !found || !u.type[0])
        return -1;
    u.text = p->text.data;
    u.text_len = p->text.len;
    on_update(p, &u, sink);
    return 0;
}

static void update_slow(struct pi_parser *p, const cJSON *msg, const struct bt_parser_sink *sink)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(msg, "assistantMessageEvent");
    const char *type = bt_json_str(e, "type");
    if (!type)
        return;
    struct update u = {.index = bt_json_count(e, "contentIndex")};
    if (u.index < 0)
        u.index = 0;
    snprintf(u.type, sizeof(u.type), "%s", type);
    const char *t = bt_json_str(e, "delta") ? bt_json_str(e, "delta") : bt_json_str(e, "content");
    if (t) {
        u.text = t;
        u.text_len = strlen(t);
        u.has_text = 1;
    }
    on_update(p, &u, sink);
}

/* ---- messages and usage --------------------------------------------- */

static void add_count(int64_t *sum, int64_t v)
{
    if (v == BT_UNKNOWN)
        return;
    int64_t s = *sum == BT_UNKNOWN ? 0 : *sum;
    *sum = v > INT64_MAX - s ? INT64_MAX : s + v;
}

/* message_end of an assistant message: its usage and how it stopped. */
static void on_message_end(struct pi_parser *p, const cJSON *m, const struct bt_parser_sink *sink)
{
    bt_json_set_str(&p->stop_reason, bt_json_str(m, "stopReason"));
    if (p->stop_reason && strcmp(p->stop_reason, "error") == 0)
        bt_json_set_str(&p->error_message, bt_json_str(m, "errorMessage"));
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "usage");
    if (!cJSON_IsObject(u))
        return;
    struct bt_usage *t = &p->usage;
    add_count(&t->input_tokens, bt_json_count(u, "input"));
    add_count(&t->cached_input_tokens, bt_json_count(u, "cacheRead"));
    add_count(&t->output_tokens, bt_json_count(u, "output"));
    add_count(&t->reasoning_tokens, bt_json_count(u, "reasoning")); /* pi 1.x only */
    t->context_tokens = bt_json_count(u, "totalTokens");
    t->context_window = p->context_window;
    const cJSON *cost =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(u, "cost"), "total");
    if (cJSON_IsNumber(cost) && cost->valuedouble >= 0)
        t->cost_usd = (t->cost_usd < 0 ? 0 : t->cost_usd) + cost->valuedouble;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage = *t;
    sink->event(sink->data, &ev);
}

/* A user message pi took into the turn (the prompt, or a steer its loop
 * took in before a model request): its text parts, for the engine to
 * match against the steers it wrote. content is a string or parts
 * [{type:"text", text}] (pi 0.73.1 and 1.6.0). */
static void user_text(const cJSON *m, const struct bt_parser_sink *sink)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
    struct bt_buf text = BT_BUF_INIT;
    if (cJSON_IsString(content)) {
        bt_buf_adds(&text, content->valuestring);
    } else {
        const cJSON *part;
        cJSON_ArrayForEach(part, content)
        {
            const char *type = bt_json_str(part, "type");
            const char *t = bt_json_str(part, "text");
            if (type && strcmp(type, "text") == 0 && t)
                bt_buf_adds(&text, t);
        }
    }
    struct bt_signal sig = {.type = BT_SIGNAL_USER_TEXT, .user_text = {.text = text.data}};
    sink->signal(sink->data, &sig);
    bt_buf_release(&text);
}

static void on_message(struct pi_parser *p, const cJSON *msg, int end,
                       const struct bt_parser_sink *sink)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(msg, "message");
    const char *role = bt_json_str(m, "role");
    if (end && role && strcmp(role, "user") == 0) {
        user_text(m, sink);
        return;
    }
    if (!role || strcmp(role, "assistant") != 0)
        return; /* tool results echo what is known */
    if (!end)
        p->message++;
    else
        on_message_end(p, m, sink);
}

/* ---- tools ---------------------------------------------------------- */

static struct tool_out *tool_slot(struct pi_parser *p, const char *id)
{
    struct tool_out *free_slot = NULL;
    for (size_t i = 0; i < BT_ARRAY_SIZE(p->tools); i++) {
        if (p->tools[i].id && strcmp(p->tools[i].id, id) == 0)
            return &p->tools[i];
        if (!p->tools[i].id && !free_slot)
            free_slot = &p->tools[i];
    }
    if (!free_slot) { /* many tools at once: reuse the first slot */
        free_slot = &p->tools[0];
        free(free_slot->id);
        free(free_slot->command);
        free_slot->command = NULL;
    }
    free_slot->id = bt_xstrdup(id);
    free_slot->sent = 0;
    return free_slot;
}

/* The text blocks of a tool result, joined. */
static void result_text(const cJSON *result, struct bt_buf *out)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(result, "content"))
    {
        const char *t = bt_json_str(c, "text");
        if (t)
            bt_buf_adds(out, t);
    }
}

/* pi's file tools: write {path, content}; edit {path, edits: [{oldText,
 * newText}]} (docs/pi.md "What pi sends the model", pi 0.73.1 and 1.6.0),
 * or {path, oldText, newText} as older pi versions took it. */
static int file_tool(const char *name)
{
    return name && (strcmp(name, "write") == 0 || strcmp(name, "edit") == 0);
}

static char *tool_changes(const char *name, const cJSON *args)
{
    const char *path = bt_json_str(args, "path");
    cJSON *changes = NULL;
    if (strcmp(name, "write") == 0) {
        bt_parser_change(&changes, path, "write", NULL, NULL, NULL, bt_json_str(args, "content"));
    } else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(args, "edits"))) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(args, "edits"))
        {
            bt_parser_change(&changes, path, "update", NULL, NULL, bt_json_str(e, "oldText"),
                             bt_json_str(e, "newText"));
        }
    } else {
        bt_parser_change(&changes, path, "update", NULL, NULL, bt_json_str(args, "oldText"),
                         bt_json_str(args, "newText"));
    }
    return bt_parser_changes_text(changes);
}

static void on_tool(struct pi_parser *p, const cJSON *msg, const char *type,
                    const struct bt_parser_sink *sink)
{
    const char *id = bt_json_str(msg, "toolCallId");
    const char *name = bt_json_str(msg, "toolName");
    if (!id)
        return;
    int bash = name && strcmp(name, "bash") == 0, file = file_tool(name);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(msg, "args");
    struct bt_event ev;
    struct bt_buf out = BT_BUF_INIT;
    char *detail = NULL, *changes = NULL;
    if (strcmp(type, "tool_execution_start") == 0) {
        bt_event_init(&ev, BT_EVENT_ITEM_STARTED);
        ev.item.status = "in_progress";
        struct tool_out *t = tool_slot(p, id);
        t->sent = 0;
        bt_json_set_str(&t->command, bt_json_str(args, file ? "path" : "command"));
        if (file)
            changes = tool_changes(name, args);
    } else if (strcmp(type, "tool_execution_update") == 0) {
        /* partialResult holds all output so far: emit what is new */
        struct tool_out *t = tool_slot(p, id);
        result_text(cJSON_GetObjectItemCaseSensitive(msg, "partialResult"), &out);
        if (out.len <= t->sent) { /* nothing new, but the tool is at work */
            bt_buf_release(&out);
            progress(sink);
            return;
        }
        bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
        ev.delta = out.data + t->sent;
        ev.delta_len = out.len - t->sent;
        t->sent = out.len;
    } else {
        bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
        result_text(cJSON_GetObjectItemCaseSensitive(msg, "result"), &out);
        ev.item.status =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "isError")) ? "failed" : "completed";
        ev.item.text = out.data;
        ev.item.text_len = out.len;
    }
    ev.item.id = id;
    ev.item.kind = bash ? BT_ITEM_COMMAND : file ? BT_ITEM_FILE_CHANGE : BT_ITEM_TOOL_CALL;
    ev.item.changes_json = changes;
    if (bash)
        ev.item.command = args ? bt_json_str(args, "command") : tool_slot(p, id)->command;
    else if (file && tool_slot(p, id)->command) /* the file, as for claude's */
        ev.item.name = tool_slot(p, id)->command;
    else
        ev.item.name = name;
    if (!bash && args && ev.type != BT_EVENT_ITEM_DELTA) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddItemToObject(d, "arguments", cJSON_Duplicate(args, 1));
        detail = cJSON_PrintUnformatted(d);
        cJSON_Delete(d);
        ev.item.detail_json = detail;
    }
    sink->event(sink->data, &ev);
    cJSON_free(detail);
    cJSON_free(changes);
    bt_buf_release(&out);
}

/* ---- the end of a turn ---------------------------------------------- */

static void end_turn(struct pi_parser *p, const struct bt_parser_sink *sink,
                     enum bt_turn_status status, const char *message, int tentative)
{
    p->ended |= !tentative;
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END,
                            .turn_end = {.status = status, .tentative = tentative}};
    char *said = NULL;
    if (status == BT_TURN_FAILED) {
        said = bt_json_error_text(message); /* pi 1.6.0 "500: {…}" */
        sig.turn_end.error_kind = bt_pi_error_kind(message);
        sig.turn_end.message = said ? said : message ? message : "pi reported an error";
    }
    sink->signal(sink->data, &sig);
    free(said);
}

/* How the turn ended, from the last assistant message (and pi 1.x's
 * agent_settled.aborted); tentative for a failure. */
static void end_from_last(struct pi_parser *p, int aborted, int tentative,
                          const struct bt_parser_sink *sink)
{
    const char *why = p->stop_reason ? p->stop_reason : "stop";
    if (aborted || strcmp(why, "aborted") == 0)
        end_turn(p, sink, BT_TURN_CANCELLED, NULL, 0);
    else if (strcmp(why, "error") == 0)
        end_turn(p, sink, BT_TURN_FAILED, p->error_message, tentative);
    else
        end_turn(p, sink, BT_TURN_COMPLETED, NULL, 0);
}

/* agent_end: pi 0.73.1's end, final except after a failed request, which
 * pi may follow with a retry or a compaction (auto_retry_start,
 * compaction_start). pi 1.x says when it is done (agent_settled), so its
 * agent_end ends nothing. */
static void on_agent_end(struct pi_parser *p, const struct bt_parser_sink *sink)
{
    if (!p->settles)
        end_from_last(p, 0, 1, sink);
}

/* agent_settled (pi 1.x): no retry, compaction or queued message follows;
 * the definite end, unless one was already signalled (a retry's or a
 * compaction's failure). */
static void on_agent_settled(struct pi_parser *p, const cJSON *msg,
                             const struct bt_parser_sink *sink)
{
    if (!p->ended)
        end_from_last(p, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "aborted")), 0, sink);
}

static void resumed(const struct bt_parser_sink *sink)
{
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_RESUMED};
    sink->signal(sink->data, &sig);
}

static void on_retry(struct pi_parser *p, const cJSON *msg, int start,
                     const struct bt_parser_sink *sink)
{
    if (start) {
        char text[512];
        const char *raw = bt_json_str(msg, "errorMessage");
        char *said = bt_json_error_text(raw);
        const char *err = said ? said : raw;
        snprintf(text, sizeof(text), "pi is retrying (attempt %lld of %lld): %s",
                 (long long)bt_json_count(msg, "attempt"),
                 (long long)bt_json_count(msg, "maxAttempts"), err ? err : "the request failed");
        bt_parser_warn(sink, "retry", text, NULL, 0);
        struct bt_signal sig = {.type = BT_SIGNAL_RETRY,
                                .retry = {.error_kind = bt_pi_error_kind(raw), .message = err}};
        sink->signal(sink->data, &sig);
        free(said);
        resumed(sink);
        return;
    }
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(msg, "success"))) {
        const char *err = bt_json_str(msg, "finalError");
        end_turn(p, sink, BT_TURN_FAILED, err ? err : p->error_message, 0);
    }
}

static void on_compaction(struct pi_parser *p, const cJSON *msg, int start,
                          const struct bt_parser_sink *sink)
{
    if (start) {
        bt_parser_warn(sink, "compaction", "pi is compacting the conversation", NULL, 0);
        resumed(sink);
        return;
    }
    const char *err = bt_json_str(msg, "errorMessage");
    if (err && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "willRetry"))) {
        struct bt_signal sig = {.type = BT_SIGNAL_TURN_END,
                                .turn_end = {.status = BT_TURN_FAILED,
                                             .error_kind = BT_ERROR_KIND_CONTEXT_EXCEEDED,
                                             .message = err}};
        p->ended = 1;
        sink->signal(sink->data, &sig);
    } else if (!err) {
        progress(sink); /* the conversation was compacted: a request completed */
    }
}

/* ---- responses and UI requests -------------------------------------- */

static void on_response(struct pi_parser *p, const cJSON *msg, const struct bt_parser_sink *sink)
{
    const char *id = bt_json_str(msg, "id");
    char *end = NULL;
    long n = id ? strtol(id, &end, 10) : -1;
    struct bt_signal sig = {.type = BT_SIGNAL_RESPONSE};
    struct bt_signal_response *rs = &sig.response;
    rs->id = id && *end == '\0' && n > 0 ? n : BT_UNKNOWN;
    rs->method = bt_json_str(msg, "command");
    rs->is_error = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "success"));
    rs->error_message = bt_json_str(msg, "error");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(msg, "data");
    const char *disposition = bt_json_str(data, "disposition");
    if (rs->method && strcmp(rs->method, "prompt") == 0 && disposition) {
        /* pi 1.x (docs/rpc.md "Run lifecycle"): "started" or "queued", a
         * run that ends at agent_settled; "handled", an extension took the
         * prompt and no run starts */
        p->settles = 1;
        if (strcmp(disposition, "handled") == 0)
            end_turn(p, sink, BT_TURN_COMPLETED, NULL, 0);
    }
    if (rs->method && strcmp(rs->method, "get_state") == 0 && cJSON_IsObject(data)) {
        rs->session_id = bt_json_str(data, "sessionId");
        rs->session_path = bt_json_str(data, "sessionFile");
        int64_t w = bt_json_count(cJSON_GetObjectItemCaseSensitive(data, "model"), "contextWindow");
        if (w != BT_UNKNOWN)
            p->context_window = w;
    }
    sink->signal(sink->data, &sig);
}

static const char *const dialogs[] = {"select", "confirm", "input", "editor"};

static void on_ui_request(const cJSON *msg, const struct bt_parser_sink *sink)
{
    const char *method = bt_json_str(msg, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    int dialog = 0;
    for (size_t i = 0; method && i < BT_ARRAY_SIZE(dialogs); i++)
        dialog |= strcmp(method, dialogs[i]) == 0;
    if (!dialog) { /* fire-and-forget: only a notification is worth showing */
        const char *note =
            method && strcmp(method, "notify") == 0 ? bt_json_str(msg, "message") : NULL;
        if (note)
            bt_parser_warn(sink, "coder", note, NULL, 0);
        return;
    }
    char *rid = cJSON_PrintUnformatted(id);
    const char *title = bt_json_str(msg, "title");
    struct bt_signal sig = {.type = BT_SIGNAL_REQUEST,
                            .request = {.request_id = rid, .method = method}};
    struct bt_signal_request *rq = &sig.request;
    rq->summary = title ? title : method;
    char *questions = NULL;
    if (strcmp(method, "confirm") == 0) { /* yes or no: an approval */
        rq->approval_kind = "other";
    } else { /* select (from options), input, editor: the user's words */
        cJSON *qs = NULL;
        bt_parser_question(&qs, NULL, NULL, rq->summary,
                           cJSON_GetObjectItemCaseSensitive(msg, "options"), 0);
        rq->approval_kind = "user_input";
        rq->questions_json = questions = bt_parser_changes_text(qs);
    }
    bt_parser_approval(sink, rq, NULL, NULL);
    sink->signal(sink->data, &sig);
    cJSON_free(questions);
    cJSON_free(rid);
}

/* ---- dispatch ------------------------------------------------------- */

/* Events with nothing for baton. pi 1.x (docs/json.md): entry_appended (a
 * session entry, e.g. the context_edit before a retry), the state events,
 * a compaction's summary request retried (summarization_retry_*; the
 * compaction's own events say how it ends), the output of an rpc `bash`
 * command, which baton never sends. */
static const char *const ignored[] = {"agent_start",
                                      "turn_start",
                                      "turn_end",
                                      "queue_update",
                                      "session_info",
                                      "message_start",
                                      "entry_appended",
                                      "session_info_changed",
                                      "thinking_level_changed",
                                      "summarization_retry_scheduled",
                                      "summarization_retry_attempt_start",
                                      "summarization_retry_finished",
                                      "bash_execution_update"};

static int is_ignored(const char *type)
{
    for (size_t i = 0; i < BT_ARRAY_SIZE(ignored); i++)
        if (strcmp(ignored[i], type) == 0)
            return 1;
    return 0;
}

static int dispatch(struct pi_parser *p, const cJSON *msg, const char *type,
                    const struct bt_parser_sink *sink)
{
    if (strcmp(type, "message_update") == 0)
        update_slow(p, msg, sink);
    else if (strcmp(type, "message_start") == 0 || strcmp(type, "message_end") == 0)
        on_message(p, msg, type[8] == 'e', sink);
    else if (strncmp(type, "tool_execution_", 15) == 0)
        on_tool(p, msg, type, sink);
    else if (strcmp(type, "agent_end") == 0)
        on_agent_end(p, sink);
    else if (strcmp(type, "agent_settled") == 0)
        on_agent_settled(p, msg, sink);
    else if (strcmp(type, "response") == 0)
        on_response(p, msg, sink);
    else if (strncmp(type, "auto_retry_", 11) == 0)
        on_retry(p, msg, type[11] == 's', sink);
    else if (strncmp(type, "compaction_", 11) == 0)
        on_compaction(p, msg, type[11] == 's', sink);
    else if (strncmp(type, "auto_compaction_", 16) == 0) /* their name before pi 0.73 */
        on_compaction(p, msg, type[16] == 's', sink);
    else if (strcmp(type, "extension_ui_request") == 0)
        on_ui_request(msg, sink);
    else if (strcmp(type, "extension_error") == 0)
        bt_parser_warn(sink, "coder", bt_json_str(msg, "error") ? bt_json_str(msg, "error") : type,
                       NULL, 0);
    else if (!is_ignored(type))
        return BT_ENOTFOUND;
    return 0;
}

/* The line's "type" when it is the first member (as pi writes it); "" if
 * not, and the slow path finds it. */
static void first_type(struct pi_parser *p, const char *json, size_t len, char *type, size_t n)
{
    struct bt_jscan s;
    const char *k;
    size_t kn;
    type[0] = '\0';
    bt_jscan_init(&s, json, len);
    if (bt_jscan_object(&s) == 0 && bt_jscan_member(&s, &k, &kn) == 1 &&
        bt_jscan_key_is(k, kn, "type")) {
        bt_buf_reset(&p->word);
        if (bt_jscan_string(&s, &p->word) == 0 && p->word.len < n)
            memcpy(type, p->word.data, p->word.len + 1);
    }
}

static void pi_line(void *st, char *line, size_t len, const struct bt_parser_sink *sink)
{
    struct pi_parser *p = st;
    const char *json = bt_parser_json_start(line, len);
    if (!json) {
        if (len)
            bt_parser_warn(sink, "noise", "pi wrote a line that is not JSON", line, len);
        return;
    }
    size_t n = len - (size_t)(json - line);
    char type[40];
    first_type(p, json, n, type, sizeof(type));
    /* the big lines: a delta inside two copies of the message, or whole
     * message lists that only repeat what was streamed */
    if (strcmp(type, "message_update") == 0 && update_fast(p, json, n, sink) == 0)
        return;
    if (strcmp(type, "turn_end") == 0)
        return;
    if (strcmp(type, "agent_end") == 0) {
        on_agent_end(p, sink);
        return;
    }
    cJSON *msg = bt_json_parse(json, n, NULL);
    const char *t = bt_json_str(msg, "type");
    if (!cJSON_IsObject(msg))
        bt_parser_warn(sink, "invalid_json", "pi wrote a line that is not valid JSON", line, len);
    else if (!t)
        bt_parser_warn(sink, "protocol", "pi wrote a message without a type", line, len);
    else if (dispatch(p, msg, t, sink) != 0)
        bt_parser_warn(sink, "unknown_method", "unknown pi event", line, len);
    cJSON_Delete(msg);
}

static void pi_diagnose(void *st, const char *tail, size_t tail_len, int64_t exit_code, int signal,
                        enum bt_error_kind *kind, struct bt_buf *msg)
{
    struct pi_parser *p = st;
    (void)tail_len;
    bt_pi_diagnose(tail, exit_code, signal, p->error_message, kind, msg);
}

const struct bt_parser_ops bt_parser_pi = {
    .create = pi_create,
    .destroy = pi_destroy,
    .line = pi_line,
    .diagnose = pi_diagnose,
};
