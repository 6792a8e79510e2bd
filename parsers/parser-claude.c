/* SPDX-License-Identifier: MIT */
/*
 * claude parser: maps claude stream-json lines to normalized events and to
 * signals for the claude runner. See parser-claude.h for the protocol
 * source; the shapes are in docs/claude.md.
 *
 * The signals and error kinds are built in a few small functions
 * (send_init, send_request, end_turn, error_kind) so that the shape of
 * struct bt_signal and of error kinds can change in one place.
 */
#include "parser-claude.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "parser-claude-error.h"

#define MAX_BLOCKS 16 /* content blocks of one message kept track of */
#define MAX_TOOLS 32  /* tool uses of one turn waiting for their result */

/* A content block of the message being streamed. */
struct block {
    int kind;           /* 0 unused, 'm' text, 'r' thinking, 't' tool_use */
    struct bt_buf text; /* text or thinking so far; tool_use: input JSON */
    char *tool_id;      /* tool_use: its id */
    char *tool_name;    /* tool_use: its name */
};

/* A tool use whose item started and whose result has not come yet. */
struct tool {
    char *id;
    enum bt_item_kind kind;
    char *name;     /* tool name, or the file path / query the item names */
    char *command;  /* Bash: the command line */
    char *plan;     /* TodoWrite: its todos as plan lines, "[status] content" */
    char *subagent; /* the sub-agent that uses it (its Task's id); NULL: the main agent */
};

struct claude_parser {
    int message;      /* messages streamed so far (item ids) */
    char *message_id; /* the API id of the message being streamed */
    struct block blocks[MAX_BLOCKS];
    struct tool tools[MAX_TOOLS];
    char *api_error;        /* "error" of the last synthetic assistant message */
    const char *subagent;   /* the line's parent_tool_use_id (a sub-agent's), or NULL */
    int64_t context_tokens; /* last request: input + cache + output */
    int inited;             /* init seen: a steer's query repeats it (runner-claude.c) */
    struct bt_usage sum;    /* the token counts of the results so far: a steer's query
                               has a result of its own, and the turn's usage is the sum */
};

static void *claude_create(void)
{
    struct claude_parser *p = bt_xcalloc(1, sizeof(*p));
    for (size_t i = 0; i < MAX_BLOCKS; i++)
        bt_buf_init(&p->blocks[i].text);
    p->context_tokens = BT_UNKNOWN;
    bt_usage_init(&p->sum);
    return p;
}

static void block_clear(struct block *b)
{
    bt_buf_reset(&b->text);
    free(b->tool_id);
    free(b->tool_name);
    b->tool_id = b->tool_name = NULL;
    b->kind = 0;
}

static void tool_clear(struct tool *t)
{
    free(t->id);
    free(t->name);
    free(t->command);
    free(t->plan);
    free(t->subagent);
    memset(t, 0, sizeof(*t));
}

static void claude_destroy(void *st)
{
    struct claude_parser *p = st;
    if (!p)
        return;
    for (size_t i = 0; i < MAX_BLOCKS; i++) {
        block_clear(&p->blocks[i]);
        bt_buf_release(&p->blocks[i].text);
    }
    for (size_t i = 0; i < MAX_TOOLS; i++)
        tool_clear(&p->tools[i]);
    free(p->message_id);
    free(p->api_error);
    free(p);
}

static void progress(const struct bt_parser_sink *sink)
{
    struct bt_signal sig = {.type = BT_SIGNAL_PROGRESS};
    sink->signal(sink->data, &sig);
}

/* ---- signals ---------------------------------------------------------- */

static void send_init(const char *session_id, const char *version,
                      const struct bt_parser_sink *sink)
{
    if (version) {
        struct bt_signal v = {.type = BT_SIGNAL_CODER_VERSION,
                              .coder_version = {.version = version}};
        sink->signal(sink->data, &v);
    }
    struct bt_signal sig = {
        .type = BT_SIGNAL_RESPONSE,
        .response = {.id = BT_UNKNOWN, .method = "init", .session_id = session_id}};
    sink->signal(sink->data, &sig);
}

static void send_request(const char *request_id_json, const char *subtype, const char *kind,
                         const char *summary, const char *item_id, const char *input_json,
                         const char *questions_json, const struct bt_parser_sink *sink)
{
    struct bt_signal sig = {.type = BT_SIGNAL_REQUEST,
                            .request = {.request_id = request_id_json,
                                        .method = subtype,
                                        .approval_kind = kind,
                                        .summary = summary,
                                        .item_id = item_id,
                                        .params_json = input_json,
                                        .questions_json = questions_json}};
    sink->signal(sink->data, &sig);
}

static void end_turn(enum bt_turn_status status, enum bt_error_kind kind, const char *message,
                     const struct bt_parser_sink *sink)
{
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END, .turn_end = {.status = status}};
    if (status == BT_TURN_FAILED) {
        sig.turn_end.error_kind = kind;
        sig.turn_end.message = message ? message : "claude reported an error";
    }
    sink->signal(sink->data, &sig);
}

/* ---- tools ------------------------------------------------------------ */

/* The item kind of a claude tool (its built-in tool names, 2.1.332). */
static enum bt_item_kind tool_kind(const char *name)
{
    static const struct {
        const char *name;
        enum bt_item_kind kind;
    } map[] = {
        {"Bash", BT_ITEM_COMMAND},
        {"Edit", BT_ITEM_FILE_CHANGE},
        {"Write", BT_ITEM_FILE_CHANGE},
        {"MultiEdit", BT_ITEM_FILE_CHANGE},
        {"NotebookEdit", BT_ITEM_FILE_CHANGE},
        {"WebSearch", BT_ITEM_WEB_SEARCH},
        {"WebFetch", BT_ITEM_WEB_SEARCH},
        {"TodoWrite", BT_ITEM_PLAN},
        {"Task", BT_ITEM_SUBAGENT},  /* a sub-agent: its messages name it in */
        {"Agent", BT_ITEM_SUBAGENT}, /* parent_tool_use_id (Task's later name) */
    };
    for (size_t i = 0; name && i < BT_ARRAY_SIZE(map); i++)
        if (strcmp(map[i].name, name) == 0)
            return map[i].kind;
    return BT_ITEM_TOOL_CALL;
}

/* What an item names from the tool input: the file, the query or URL, or
 * the tool's own name. */
static const char *tool_label(enum bt_item_kind kind, const char *name, const cJSON *input)
{
    const char *s = NULL;
    if (kind == BT_ITEM_FILE_CHANGE)
        s = bt_json_str(input, "file_path") ? bt_json_str(input, "file_path")
                                            : bt_json_str(input, "notebook_path");
    else if (kind == BT_ITEM_WEB_SEARCH)
        s = bt_json_str(input, "query") ? bt_json_str(input, "query") : bt_json_str(input, "url");
    else if (kind == BT_ITEM_SUBAGENT) /* Task {description, prompt, subagent_type} */
        s = bt_json_str(input, "description") ? bt_json_str(input, "description")
                                              : bt_json_str(input, "subagent_type");
    return s ? s : name;
}

/* The changes a file tool's input asks for (claude's Write {file_path,
 * content}, Edit {file_path, old_string, new_string}, MultiEdit {file_path,
 * edits: [{old_string, new_string}]}, 2.1.332); NULL for others (a
 * notebook's cells are not a file's text). */
static char *tool_changes(const char *name, const cJSON *input)
{
    const char *path = bt_json_str(input, "file_path");
    cJSON *changes = NULL;
    if (!name || !path)
        return NULL;
    if (strcmp(name, "Write") == 0) {
        bt_parser_change(&changes, path, "write", NULL, NULL, NULL, bt_json_str(input, "content"));
    } else if (strcmp(name, "Edit") == 0) {
        bt_parser_change(&changes, path, "update", NULL, NULL, bt_json_str(input, "old_string"),
                         bt_json_str(input, "new_string"));
    } else if (strcmp(name, "MultiEdit") == 0) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(input, "edits"))
        {
            bt_parser_change(&changes, path, "update", NULL, NULL, bt_json_str(e, "old_string"),
                             bt_json_str(e, "new_string"));
        }
    }
    return bt_parser_changes_text(changes);
}

static struct tool *tool_find(struct claude_parser *p, const char *id)
{
    for (size_t i = 0; id && i < MAX_TOOLS; i++)
        if (p->tools[i].id && strcmp(p->tools[i].id, id) == 0)
            return &p->tools[i];
    return NULL;
}

/* TodoWrite's input {todos: [{content, status, activeForm}]} as plan
 * lines "[status] content", the plan text of every coder (docs/events.md):
 * its result says only that the list was saved. NULL without todos. */
static char *todo_plan(const cJSON *input)
{
    struct bt_buf text = BT_BUF_INIT;
    const cJSON *todo;
    cJSON_ArrayForEach(todo, cJSON_GetObjectItemCaseSensitive(input, "todos"))
    {
        const char *content = bt_json_str(todo, "content");
        const char *status = bt_json_str(todo, "status");
        if (content)
            bt_buf_addf(&text, "%s[%s] %s", text.len ? "\n" : "", status ? status : "pending",
                        content);
    }
    if (!text.len) {
        bt_buf_release(&text);
        return NULL;
    }
    return bt_buf_detach(&text, NULL);
}

/* item.started for a tool use whose input is complete. */
static void tool_started(struct claude_parser *p, const char *id, const char *name,
                         const cJSON *input, const struct bt_parser_sink *sink)
{
    if (!id || tool_find(p, id))
        return;
    struct tool *t = NULL;
    for (size_t i = 0; i < MAX_TOOLS && !t; i++)
        if (!p->tools[i].id)
            t = &p->tools[i];
    if (!t) { /* a full table: the oldest waiting tool loses its result */
        t = &p->tools[0];
        tool_clear(t);
    }
    t->id = bt_xstrdup(id);
    t->kind = tool_kind(name);
    const char *label = tool_label(t->kind, name, input);
    t->name = bt_xstrdup(label ? label : "tool"); /* a tool_use without a name */
    if (t->kind == BT_ITEM_COMMAND && bt_json_str(input, "command"))
        t->command = bt_xstrdup(bt_json_str(input, "command"));
    if (t->kind == BT_ITEM_PLAN)
        t->plan = todo_plan(input);
    /* a sub-agent's own item is tagged with it; a sub-agent with itself */
    const char *owner = t->kind == BT_ITEM_SUBAGENT ? t->id : p->subagent;
    t->subagent = owner ? bt_xstrdup(owner) : NULL;
    char *detail = input ? cJSON_PrintUnformatted(input) : NULL;
    char *changes = t->kind == BT_ITEM_FILE_CHANGE ? tool_changes(name, input) : NULL;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_STARTED);
    ev.item.id = t->id;
    ev.item.kind = t->kind;
    ev.item.subagent = t->subagent;
    ev.item.status = "in_progress";
    ev.item.name = t->name;
    ev.item.command = t->command;
    ev.item.detail_json = t->kind == BT_ITEM_COMMAND ? NULL : detail;
    ev.item.changes_json = changes;
    sink->event(sink->data, &ev);
    cJSON_free(detail);
    cJSON_free(changes);
}

/* Text of a tool_result's content: a string, or blocks with "text". */
static void result_text(const cJSON *content, struct bt_buf *out)
{
    const cJSON *b;
    const cJSON *blocks = cJSON_IsArray(content) ? content : NULL;
    if (cJSON_IsString(content)) {
        bt_buf_adds(out, content->valuestring);
        return;
    }
    cJSON_ArrayForEach(b, blocks)
    {
        const char *t = bt_json_str(b, "text");
        if (t)
            bt_buf_adds(out, t);
    }
}

/* Whether claude's own meta says the tool was refused (a deny answer). */
static int rejected(const cJSON *msg, const char *id)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(msg, "tool_result_meta"))
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "permission_decision");
        const char *mid = bt_json_str(m, "id");
        if (mid && strcmp(mid, id) == 0 && bt_json_str(d, "decision") &&
            strcmp(bt_json_str(d, "decision"), "reject") == 0)
            return 1;
    }
    return 0;
}

/* A user message: the results of tool uses. */
static void on_user(struct claude_parser *p, const cJSON *msg, const struct bt_parser_sink *sink)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(msg, "message"), "content");
    const cJSON *b;
    const cJSON *blocks = cJSON_IsArray(content) ? content : NULL;
    cJSON_ArrayForEach(b, blocks)
    {
        const char *type = bt_json_str(b, "type");
        struct tool *t = tool_find(p, bt_json_str(b, "tool_use_id"));
        if (!type || strcmp(type, "tool_result") != 0 || !t)
            continue;
        struct bt_buf out = BT_BUF_INIT;
        result_text(cJSON_GetObjectItemCaseSensitive(b, "content"), &out);
        int failed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "is_error"));
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
        ev.item.id = t->id;
        ev.item.kind = t->kind;
        ev.item.subagent = t->subagent;
        ev.item.status = !failed ? "completed" : rejected(msg, t->id) ? "declined" : "failed";
        ev.item.name = t->name;
        ev.item.command = t->command;
        ev.item.text = out.data;
        ev.item.text_len = out.len;
        if (t->plan && !failed) { /* the plan itself, not "Todos have been modified" */
            ev.item.text = t->plan;
            ev.item.text_len = strlen(t->plan);
        }
        sink->event(sink->data, &ev);
        bt_buf_release(&out);
        tool_clear(t);
    }
}

/* ---- the partial-message stream ---------------------------------------- */

static void block_id(const struct claude_parser *p, const struct block *b, int64_t index, char *id,
                     size_t n)
{
    snprintf(id, n, "%s-%d-%lld", b->kind == 'r' ? "think" : "msg", p->message, (long long)index);
}

static void block_event(struct claude_parser *p, struct block *b, int64_t index,
                        enum bt_event_type type, const char *delta, size_t delta_len,
                        const struct bt_parser_sink *sink)
{
    char id[48];
    block_id(p, b, index, id, sizeof(id));
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.item.id = id;
    ev.item.kind = b->kind == 'r' ? BT_ITEM_REASONING : BT_ITEM_MESSAGE;
    ev.item.subagent = p->subagent;
    ev.item.status = type == BT_EVENT_ITEM_COMPLETED ? "completed" : "in_progress";
    if (type == BT_EVENT_ITEM_DELTA) {
        ev.delta = delta;
        ev.delta_len = delta_len;
    } else if (type == BT_EVENT_ITEM_COMPLETED) {
        ev.item.text = b->text.data ? b->text.data : "";
        ev.item.text_len = b->text.len;
    }
    sink->event(sink->data, &ev);
}

static struct block *block_at(struct claude_parser *p, const cJSON *ev, int64_t *index)
{
    *index = bt_json_count(ev, "index");
    return *index >= 0 && *index < MAX_BLOCKS ? &p->blocks[*index] : NULL;
}

static void on_block_start(struct claude_parser *p, const cJSON *ev,
                           const struct bt_parser_sink *sink)
{
    int64_t index;
    struct block *b = block_at(p, ev, &index);
    const cJSON *cb = cJSON_GetObjectItemCaseSensitive(ev, "content_block");
    const char *type = bt_json_str(cb, "type");
    if (!b || !type)
        return;
    block_clear(b);
    if (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0) {
        b->kind = type[0] == 't' && type[1] == 'h' ? 'r' : 'm';
        block_event(p, b, index, BT_EVENT_ITEM_STARTED, NULL, 0, sink);
    } else if (strcmp(type, "tool_use") == 0) {
        b->kind = 't';
        bt_json_set_str(&b->tool_id, bt_json_str(cb, "id"));
        bt_json_set_str(&b->tool_name, bt_json_str(cb, "name"));
        progress(sink);
    }
}

static void on_block_delta(struct claude_parser *p, const cJSON *ev,
                           const struct bt_parser_sink *sink)
{
    int64_t index;
    struct block *b = block_at(p, ev, &index);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "delta");
    const char *type = bt_json_str(d, "type");
    if (!b || !b->kind || !type)
        return;
    const char *s = NULL;
    if (strcmp(type, "text_delta") == 0 && b->kind == 'm')
        s = bt_json_str(d, "text");
    else if (strcmp(type, "thinking_delta") == 0 && b->kind == 'r')
        s = bt_json_str(d, "thinking");
    else if (strcmp(type, "input_json_delta") == 0 && b->kind == 't' &&
             bt_json_str(d, "partial_json")) {
        bt_buf_adds(&b->text, bt_json_str(d, "partial_json"));
        progress(sink);
        return;
    }
    if (!s)
        return; /* signature_delta and the like carry nothing to show */
    size_t n = strlen(s);
    bt_buf_add(&b->text, s, n);
    block_event(p, b, index, BT_EVENT_ITEM_DELTA, s, n, sink);
}

static void on_block_stop(struct claude_parser *p, const cJSON *ev,
                          const struct bt_parser_sink *sink)
{
    int64_t index;
    struct block *b = block_at(p, ev, &index);
    if (!b || !b->kind)
        return;
    if (b->kind == 't') {
        cJSON *input =
            b->text.len ? bt_json_parse(b->text.data, b->text.len, NULL) : cJSON_CreateObject();
        tool_started(p, b->tool_id, b->tool_name, input, sink);
        cJSON_Delete(input);
    } else {
        block_event(p, b, index, BT_EVENT_ITEM_COMPLETED, NULL, 0, sink);
    }
    block_clear(b);
}

/* message_delta: the usage of one request; its total is what the context
 * holds now. */
static void on_message_delta(struct claude_parser *p, const cJSON *ev)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(ev, "usage");
    static const char *const keys[] = {"input_tokens", "cache_read_input_tokens",
                                       "cache_creation_input_tokens", "output_tokens"};
    int64_t sum = 0;
    for (size_t i = 0; i < BT_ARRAY_SIZE(keys); i++) {
        int64_t v = bt_json_count(u, keys[i]);
        if (v != BT_UNKNOWN)
            sum += v;
    }
    if (u)
        p->context_tokens = sum;
}

static void on_stream_event(struct claude_parser *p, const cJSON *msg,
                            const struct bt_parser_sink *sink)
{
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(msg, "event");
    const char *type = bt_json_str(ev, "type");
    if (!type)
        return;
    if (p->subagent) {
        /* a sub-agent's stream: its blocks would mix with the main agent's
         * (the same indexes); its whole messages follow as `assistant` */
        progress(sink);
        return;
    }
    if (strcmp(type, "message_start") == 0) {
        p->message++;
        bt_json_set_str(&p->message_id,
                        bt_json_str(cJSON_GetObjectItemCaseSensitive(ev, "message"), "id"));
        for (size_t i = 0; i < MAX_BLOCKS; i++)
            block_clear(&p->blocks[i]);
    } else if (strcmp(type, "content_block_start") == 0) {
        on_block_start(p, ev, sink);
    } else if (strcmp(type, "content_block_delta") == 0) {
        on_block_delta(p, ev, sink);
    } else if (strcmp(type, "content_block_stop") == 0) {
        on_block_stop(p, ev, sink);
    } else if (strcmp(type, "message_delta") == 0) {
        on_message_delta(p, ev);
    }
}

/* The complete text of a streamed block, from the assistant message that
 * claude 2.1.332 sends for it before its content_block_stop: the block's
 * item.completed carries it, so a delta that was lost or cut does not
 * stay in the answer (the engine warns when they differ, turn.c). The
 * message does not name the block's index: it is the last open block of
 * its kind. */
static void block_repair(struct claude_parser *p, int kind, const char *text)
{
    for (size_t i = MAX_BLOCKS; text && i-- > 0;) {
        struct block *b = &p->blocks[i];
        if (b->kind == kind) {
            bt_buf_reset(&b->text);
            bt_buf_adds(&b->text, text);
            return;
        }
    }
}

/* An assistant message: one finished content block. Streamed blocks were
 * shown already (their complete text repairs them); a message that was
 * not streamed (no partial messages, or a tool use claude made up) is
 * shown from here. A synthetic API error names its kind in "error". */
static void on_assistant(struct claude_parser *p, const cJSON *msg,
                         const struct bt_parser_sink *sink)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(msg, "message");
    const char *id = bt_json_str(m, "id");
    if (bt_json_str(msg, "error")) {
        if (!p->subagent) /* a sub-agent's failure is its Task's result, not the turn's */
            bt_json_set_str(&p->api_error, bt_json_str(msg, "error"));
        return;
    }
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(m, "content"))
    {
        const char *type = bt_json_str(b, "type");
        int streamed = id && p->message_id && strcmp(id, p->message_id) == 0;
        if (type && strcmp(type, "tool_use") == 0) /* no-op when streamed */
            tool_started(p, bt_json_str(b, "id"), bt_json_str(b, "name"),
                         cJSON_GetObjectItemCaseSensitive(b, "input"), sink);
        else if (type && streamed && !p->subagent &&
                 (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0))
            block_repair(p, type[1] == 'h' ? 'r' : 'm',
                         bt_json_str(b, type[1] == 'h' ? "thinking" : "text"));
        else if (type && (p->subagent || !streamed) &&
                 (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0)) {
            struct block blk = {.kind = type[1] == 'h' ? 'r' : 'm', .text = BT_BUF_INIT};
            const char *text = bt_json_str(b, type[1] == 'h' ? "thinking" : "text");
            bt_buf_adds(&blk.text, text ? text : "");
            p->message++;
            block_event(p, &blk, 0, BT_EVENT_ITEM_STARTED, NULL, 0, sink);
            block_event(p, &blk, 0, BT_EVENT_ITEM_COMPLETED, NULL, 0, sink);
            bt_buf_release(&blk.text);
        }
    }
}

/* ---- control requests ---------------------------------------------------- */

static const char *approval_kind(enum bt_item_kind k)
{
    return k == BT_ITEM_COMMAND ? "command" : k == BT_ITEM_FILE_CHANGE ? "file_change" : "other";
}

/* The AskUserQuestion tool's questions, as text (owned, cJSON_free):
 * input.questions [{question, header, options: [{label, description}],
 * multiSelect}] (Claude Code 2.1.332); NULL when there are none. */
static char *ask_questions(const cJSON *input)
{
    cJSON *qs = NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(input, "questions"), *q;
    if (!cJSON_IsArray(list))
        list = NULL;
    cJSON_ArrayForEach(q, list)
    {
        bt_parser_question(&qs, NULL, bt_json_str(q, "header"), bt_json_str(q, "question"),
                           cJSON_GetObjectItemCaseSensitive(q, "options"),
                           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "multiSelect")));
    }
    return bt_parser_changes_text(qs);
}

/* Every control_request becomes a REQUEST signal, so the runner answers it
 * (an unanswered one stalls the turn); can_use_tool is also an approval. */
static void on_control_request(const cJSON *msg, const struct bt_parser_sink *sink)
{
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(msg, "request");
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(msg, "request_id");
    const char *subtype = bt_json_str(req, "subtype");
    if (!rid) {
        bt_parser_warn(sink, "protocol", "claude sent a control request without an id", NULL, 0);
        return;
    }
    if (!subtype) { /* still answered (an error): claude waits for every one */
        bt_parser_warn(sink, "protocol", "claude sent a control request without a subtype", NULL,
                       0);
        subtype = "";
    }
    char *id = cJSON_PrintUnformatted(rid);
    char *input = NULL, *questions = NULL;
    const char *kind = NULL, *summary = subtype;
    if (strcmp(subtype, "can_use_tool") == 0) {
        const char *tool = bt_json_str(req, "tool_name");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(req, "input");
        input = cJSON_PrintUnformatted(in);
        kind = approval_kind(tool_kind(tool));
        summary = bt_json_str(req, "description") ? bt_json_str(req, "description")
                  : tool                          ? tool
                                                  : subtype;
        if (tool && strcmp(tool, "AskUserQuestion") == 0) { /* a question, not a permission */
            kind = "user_input";
            questions = ask_questions(in);
            const char *first = bt_json_str(
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(in, "questions"), 0),
                "question");
            summary = first ? first : summary;
        }
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_APPROVAL_REQUESTED);
        ev.approval_kind = kind;
        ev.summary = summary;
        ev.request_id = id;
        ev.questions_json = questions;
        sink->event(sink->data, &ev);
    }
    send_request(id, subtype, kind, summary, bt_json_str(req, "tool_use_id"), input, questions,
                 sink);
    cJSON_free(questions);
    cJSON_free(input);
    cJSON_free(id);
}

/* ---- the result ---------------------------------------------------------- */

/* *sum += v, either unknown (BT_UNKNOWN) counting as nothing. */
static int64_t add_count(int64_t *sum, int64_t v)
{
    if (v != BT_UNKNOWN)
        *sum = (*sum == BT_UNKNOWN ? 0 : *sum) + v;
    return *sum;
}

static void on_usage(struct claude_parser *p, const cJSON *res, const struct bt_parser_sink *sink)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(res, "usage");
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    int64_t in = bt_json_count(u, "input_tokens"),
            read = bt_json_count(u, "cache_read_input_tokens"),
            made = bt_json_count(u, "cache_creation_input_tokens");
    /* each result counts its own query (claude 2.1.332): summed over the
     * turn's, a steer's included */
    add_count(&p->sum.input_tokens,
              in == BT_UNKNOWN ? BT_UNKNOWN : in + (read > 0 ? read : 0) + (made > 0 ? made : 0));
    ev.usage.input_tokens = p->sum.input_tokens;
    ev.usage.cached_input_tokens = add_count(&p->sum.cached_input_tokens, read);
    ev.usage.output_tokens = add_count(&p->sum.output_tokens, bt_json_count(u, "output_tokens"));
    ev.usage.reasoning_tokens =
        add_count(&p->sum.reasoning_tokens,
                  bt_json_count(cJSON_GetObjectItemCaseSensitive(u, "output_tokens_details"),
                                "thinking_tokens"));
    ev.usage.context_tokens = p->context_tokens;
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(res, "modelUsage"))
    {
        int64_t w = bt_json_count(m, "contextWindow");
        if (w > ev.usage.context_window)
            ev.usage.context_window = w;
    }
    const cJSON *cost = cJSON_GetObjectItemCaseSensitive(res, "total_cost_usd");
    if (cJSON_IsNumber(cost) && cost->valuedouble >= 0)
        ev.usage.cost_usd = cost->valuedouble;
    sink->event(sink->data, &ev);
}

static void on_result(struct claude_parser *p, const cJSON *res, const struct bt_parser_sink *sink)
{
    on_usage(p, res, sink);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "is_error"))) {
        end_turn(BT_TURN_COMPLETED, BT_ERROR_KIND_NONE, NULL, sink);
        return;
    }
    const char *reason = bt_json_str(res, "terminal_reason");
    if (reason && strncmp(reason, "aborted", 7) == 0) {
        end_turn(BT_TURN_CANCELLED, BT_ERROR_KIND_NONE, NULL, sink);
        return;
    }
    const char *text = bt_json_str(res, "result");
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "errors"), 0);
    if ((!text || !*text) && cJSON_IsString(first))
        text = first->valuestring;
    end_turn(BT_TURN_FAILED, bt_claude_error_kind(p->api_error, res, text), text, sink);
}

/* ---- dispatch ------------------------------------------------------------ */

static void on_system(struct claude_parser *p, const cJSON *msg, const char *line, size_t len,
                      const struct bt_parser_sink *sink)
{
    const char *sub = bt_json_str(msg, "subtype");
    if (sub && strcmp(sub, "init") == 0) {
        if (p->inited++)
            return;
        send_init(bt_json_str(msg, "session_id"), bt_json_str(msg, "claude_code_version"), sink);
    } else if (sub && strcmp(sub, "api_retry") == 0) {
        bt_claude_retry(msg, line, len, sink);
    } else if (sub && strcmp(sub, "compact_boundary") == 0) {
        bt_parser_warn(sink, "compaction", "claude compacted the conversation", NULL, 0);
    } else if (!sub || (strcmp(sub, "status") != 0 && strcmp(sub, "thinking_tokens") != 0 &&
                        strncmp(sub, "hook_", 5) != 0)) {
        bt_parser_warn(sink, "unknown_method", "unknown claude system message", line, len);
    }
}

static int dispatch(struct claude_parser *p, const cJSON *msg, const char *type, const char *line,
                    size_t len, const struct bt_parser_sink *sink)
{
    /* A sub-agent's message (Task/Agent tool, claude 2.1.332) names the
     * tool use that started it; the main agent's has null there. */
    p->subagent = bt_json_str(msg, "parent_tool_use_id");
    if (strcmp(type, "stream_event") == 0)
        on_stream_event(p, msg, sink);
    else if (strcmp(type, "assistant") == 0)
        on_assistant(p, msg, sink);
    else if (strcmp(type, "user") == 0)
        on_user(p, msg, sink);
    else if (strcmp(type, "system") == 0)
        on_system(p, msg, line, len, sink);
    else if (strcmp(type, "control_request") == 0)
        on_control_request(msg, sink);
    else if (strcmp(type, "result") == 0)
        on_result(p, msg, sink);
    else if (strcmp(type, "rate_limit_event") == 0)
        bt_claude_rate_limit(msg, line, len, sink);
    else if (strcmp(type, "tool_progress") == 0)
        progress(sink); /* a long tool's heartbeat (SDKToolProgressMessage) */
    else if (strcmp(type, "control_response") != 0 && strcmp(type, "control_cancel_request") != 0)
        return BT_ENOTFOUND;
    return 0;
}

static void claude_line(void *st, char *line, size_t len, const struct bt_parser_sink *sink)
{
    struct claude_parser *p = st;
    const char *json = bt_parser_json_start(line, len);
    if (!json) {
        if (len)
            bt_parser_warn(sink, "noise", "claude wrote a line that is not JSON", line, len);
        return;
    }
    cJSON *msg = bt_json_parse(json, len - (size_t)(json - line), NULL);
    const char *t = bt_json_str(msg, "type");
    if (!cJSON_IsObject(msg))
        bt_parser_warn(sink, "invalid_json", "claude wrote a line that is not valid JSON", line,
                       len);
    else if (!t)
        bt_parser_warn(sink, "protocol", "claude wrote a message without a type", line, len);
    else if (dispatch(p, msg, t, line, len, sink) != 0)
        bt_parser_warn(sink, "unknown_method", "unknown claude message", line, len);
    p->subagent = NULL; /* it pointed into msg */
    cJSON_Delete(msg);
}

const struct bt_parser_ops bt_parser_claude = {
    .create = claude_create,
    .destroy = claude_destroy,
    .line = claude_line,
    .diagnose = bt_claude_diagnose,
};
