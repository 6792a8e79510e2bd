/* SPDX-License-Identifier: MIT */
/*
 * codex parser: maps codex app-server JSON-RPC lines to normalized events and
 * to signals for the codex runner. The protocol source: parser-codex.h.
 */
#include "parser-codex.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parser-codex-agents.h"
#include "parser-codex-error.h"
#include "json.h"
#include "parser-form.h"

struct codex_parser {
    struct bt_usage turn_usage; /* sum of `last` breakdowns in this turn */
    int usage_seen;
    int ended;                      /* turn/completed seen */
    enum bt_error_kind error_kind;  /* from the last non-retry error notification */
    char *error_message;            /* its message; NULL: none seen */
    char *thread_id;                /* the conversation's thread, from thread/start|resume */
    char *turn_id;                  /* this turn's id, from turn/start or turn/started */
    const char *subagent;           /* the sub-agent thread of the line being read, or NULL */
    struct bt_codex_agents *agents; /* the sub-agent threads seen */
    char *item_id;                  /* the last item started, and a one-line summary of */
    char *item_summary;             /* it, for approval requests that name only the id */
};

static void *codex_create(void)
{
    struct codex_parser *p = bt_xcalloc(1, sizeof(*p));
    bt_usage_init(&p->turn_usage);
    p->agents = bt_codex_agents_new();
    return p;
}

static void codex_destroy(void *st)
{
    struct codex_parser *p = st;
    if (!p)
        return;
    free(p->error_message);
    free(p->thread_id);
    free(p->turn_id);
    bt_codex_agents_free(p->agents);
    free(p->item_id);
    free(p->item_summary);
    free(p);
}

static void emit(const struct bt_parser_sink *sink, const struct bt_event *ev)
{
    sink->event(sink->data, ev);
}

/* ---- items ---------------------------------------------------------- */

struct item_map {
    const char *type;
    enum bt_item_kind kind;
};

static const struct item_map item_types[] = {
    {"agentMessage", BT_ITEM_MESSAGE},
    {"reasoning", BT_ITEM_REASONING},
    {"commandExecution", BT_ITEM_COMMAND},
    {"fileChange", BT_ITEM_FILE_CHANGE},
    {"mcpToolCall", BT_ITEM_TOOL_CALL},
    {"dynamicToolCall", BT_ITEM_TOOL_CALL},
    {"collabAgentToolCall", BT_ITEM_TOOL_CALL},
    {"functionCallOutput", BT_ITEM_TOOL_CALL},
    {"webSearch", BT_ITEM_WEB_SEARCH},
    {"plan", BT_ITEM_PLAN},
    {"imageView", BT_ITEM_OTHER},
    {"imageGeneration", BT_ITEM_OTHER},
    {"subAgentActivity", BT_ITEM_OTHER},
    {"sleep", BT_ITEM_OTHER},
    {"enteredReviewMode", BT_ITEM_OTHER},
    {"exitedReviewMode", BT_ITEM_OTHER},
    {"contextCompaction", BT_ITEM_OTHER},
};

/* Items that echo the user's own input: not part of the answer. */
static int item_is_input(const char *type)
{
    return strcmp(type, "userMessage") == 0 || strcmp(type, "hookPrompt") == 0;
}

static int item_kind(const char *type, enum bt_item_kind *kind)
{
    for (size_t i = 0; i < BT_ARRAY_SIZE(item_types); i++) {
        if (strcmp(item_types[i].type, type) == 0) {
            *kind = item_types[i].kind;
            return 0;
        }
    }
    return BT_ENOTFOUND;
}

static const char *item_status(const char *s)
{
    if (!s)
        return NULL;
    if (strcmp(s, "inProgress") == 0)
        return "in_progress";
    if (strcmp(s, "completed") == 0 || strcmp(s, "failed") == 0 || strcmp(s, "declined") == 0)
        return s;
    return "failed"; /* an unknown status is never success */
}

/* Join the strings of an array (reasoning summary/content) with newlines. */
static void join_strings(const cJSON *arr, struct bt_buf *out)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        const char *s = cJSON_IsString(v) ? v->valuestring : bt_json_str(v, "text");
        if (!s)
            continue;
        if (out->len)
            bt_buf_addc(out, '\n');
        bt_buf_adds(out, s);
    }
}

static char *fill_item(const cJSON *it, struct bt_item *out, struct bt_buf *text)
{
    static const char *const file_keys[] = {"changes"};
    /* mcp and dynamic tools; collabAgentToolCall's (spawnAgent, wait, ...)
     * name the agents' threads and their states */
    static const char *const tool_keys[] = {
        "server", "tool",   "arguments",         "result",       "error",
        "prompt", "status", "receiverThreadIds", "agentsStates", "senderThreadId"};
    static const char *const search_keys[] = {"action", "results"};
    out->status = item_status(bt_json_str(it, "status"));
    switch (out->kind) {
    case BT_ITEM_MESSAGE: {
        /* MessagePhase: commentary | final_answer | partial_answer */
        const char *phase = bt_json_str(it, "phase");
        if (phase && (strcmp(phase, "commentary") == 0 || strcmp(phase, "final_answer") == 0))
            out->phase = phase;
        out->text = bt_json_str(it, "text");
        break;
    }
    case BT_ITEM_PLAN: out->text = bt_json_str(it, "text"); break;
    case BT_ITEM_REASONING:
        join_strings(cJSON_GetObjectItemCaseSensitive(it, "summary"), text);
        if (!text->len)
            join_strings(cJSON_GetObjectItemCaseSensitive(it, "content"), text);
        out->text = text->data;
        break;
    case BT_ITEM_COMMAND:
        out->command = bt_json_str(it, "command");
        out->cwd = bt_json_str(it, "cwd");
        out->text = bt_json_str(it, "aggregatedOutput");
        out->exit_code = bt_json_int(it, "exitCode");
        break;
    case BT_ITEM_FILE_CHANGE: return bt_parser_detail(it, file_keys, BT_ARRAY_SIZE(file_keys));
    case BT_ITEM_TOOL_CALL:
        out->name = bt_json_str(it, "tool") ? bt_json_str(it, "tool") : bt_json_str(it, "name");
        return bt_parser_detail(it, tool_keys, BT_ARRAY_SIZE(tool_keys));
    case BT_ITEM_WEB_SEARCH:
        out->name = bt_json_str(it, "query");
        return bt_parser_detail(it, search_keys, BT_ARRAY_SIZE(search_keys));
    case BT_ITEM_OTHER: { /* subAgentActivity {agentThreadId, agentPath, kind} */
        static const char *const agent_keys[] = {"agentThreadId", "agentPath", "kind"};
        if (bt_json_str(it, "agentPath"))
            out->name = bt_json_str(it, "agentPath");
        return bt_parser_detail(it, agent_keys, BT_ARRAY_SIZE(agent_keys));
    }
    default: break;
    }
    return NULL;
}

/* A file change's first path, for a one-line summary. */
static const char *first_path(const cJSON *it)
{
    const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "changes"), 0);
    return ch ? bt_json_str(ch, "path") : NULL;
}

/* A fileChange's changes, normalized: FileUpdateChange {path, kind
 * {type add | delete | update, move_path}, diff} of the app-server v2
 * schema (codex 0.171.0, fixtures/codex/0.171.0/app-server-schema.txt),
 * whose diff is the file's content for add and delete, unified hunks for
 * update. */
static char *changes_of(const cJSON *it)
{
    cJSON *changes = NULL;
    const cJSON *ch;
    cJSON_ArrayForEach(ch, cJSON_GetObjectItemCaseSensitive(it, "changes"))
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ch, "kind");
        const char *type = bt_json_str(kind, "type");
        const char *diff = bt_json_str(ch, "diff");
        int add = type && strcmp(type, "add") == 0, del = type && strcmp(type, "delete") == 0;
        bt_parser_change(&changes, bt_json_str(ch, "path"),
                         add   ? "add"
                         : del ? "delete"
                               : "update",
                         bt_json_str(kind, "move_path"), add || del ? NULL : diff,
                         del ? diff : NULL, add ? diff : NULL);
    }
    return bt_parser_changes_text(changes);
}

static void remember_item(struct codex_parser *p, const char *id, const struct bt_item *item,
                          const cJSON *it)
{
    const char *summary = item->command ? item->command : first_path(it);
    free(p->item_id);
    free(p->item_summary);
    p->item_id = bt_xstrdup(id);
    p->item_summary = summary ? bt_xstrdup(summary) : NULL;
}

static void on_item(struct codex_parser *p, const cJSON *params, enum bt_event_type type,
                    const struct bt_parser_sink *sink, const char *raw, size_t raw_len)
{
    const cJSON *it = bt_json_obj(params, "item");
    const char *itype = it ? bt_json_str(it, "type") : NULL;
    const char *id = it ? bt_json_str(it, "id") : NULL;
    if (!itype || !id) {
        bt_parser_warn(sink, "protocol", "codex item without type or id", raw, raw_len);
        return;
    }
    if (item_is_input(itype))
        return;
    struct bt_event ev;
    bt_event_init(&ev, type);
    ev.item.id = id;
    ev.item.subagent = p->subagent;
    if (item_kind(itype, &ev.item.kind) != 0) {
        bt_parser_warn(sink, "unknown_item", "unknown codex item type", itype, strlen(itype));
        ev.item.kind = BT_ITEM_OTHER;
        ev.item.name = itype;
    }
    struct bt_buf text = BT_BUF_INIT;
    char *detail = fill_item(it, &ev.item, &text);
    char *changes = ev.item.kind == BT_ITEM_FILE_CHANGE ? changes_of(it) : NULL;
    ev.item.detail_json = detail;
    ev.item.changes_json = changes;
    if (ev.item.text)
        ev.item.text_len = strlen(ev.item.text);
    if (!ev.item.status)
        ev.item.status = type == BT_EVENT_ITEM_COMPLETED ? "completed" : "in_progress";
    if (type == BT_EVENT_ITEM_STARTED)
        remember_item(p, id, &ev.item, it);
    if (p->subagent && type == BT_EVENT_ITEM_COMPLETED && ev.item.kind == BT_ITEM_MESSAGE)
        bt_codex_agents_message(p->agents, p->subagent, ev.item.text);
    emit(sink, &ev);
    cJSON_free(detail);
    cJSON_free(changes);
    bt_buf_release(&text);
}

static void on_delta(const struct codex_parser *p, const cJSON *params, enum bt_item_kind kind,
                     const struct bt_parser_sink *sink)
{
    const char *id = bt_json_str(params, "itemId");
    const char *delta = bt_json_str(params, "delta");
    if (!id || !delta)
        return;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
    ev.item.id = id;
    ev.item.kind = kind;
    ev.item.subagent = p->subagent;
    ev.delta = delta;
    ev.delta_len = strlen(delta);
    emit(sink, &ev);
}

/* ---- usage ---------------------------------------------------------- */

/* Add a count (>= 0) to a sum, saturating rather than overflowing. */
static void add_count(int64_t *sum, int64_t v)
{
    if (v == BT_UNKNOWN)
        return;
    int64_t s = *sum == BT_UNKNOWN ? 0 : *sum;
    *sum = v > INT64_MAX - s ? INT64_MAX : s + v;
}

static void set_turn(struct codex_parser *p, const char *id)
{
    if (!id || (p->turn_id && strcmp(p->turn_id, id) == 0))
        return;
    free(p->turn_id);
    p->turn_id = bt_xstrdup(id);
}

/* thread/tokenUsage/updated: `last` is the latest model request and `total`
 * the thread's running sum; a turn's usage is the sum of its `last`s, and
 * the context in use is the latest request's total. thread/resume replays
 * the previous turn's usage before the new turn starts: only notifications
 * naming this turn count. */
static void on_usage(struct codex_parser *p, const cJSON *params, const struct bt_parser_sink *sink)
{
    const char *turn = bt_json_str(params, "turnId");
    if (!p->turn_id || !turn || strcmp(turn, p->turn_id) != 0)
        return;
    const cJSON *tu = bt_json_obj(params, "tokenUsage");
    const cJSON *last = tu ? bt_json_obj(tu, "last") : NULL;
    if (!last)
        return;
    struct bt_usage *u = &p->turn_usage;
    add_count(&u->input_tokens, bt_json_count(last, "inputTokens"));
    add_count(&u->cached_input_tokens, bt_json_count(last, "cachedInputTokens"));
    add_count(&u->output_tokens, bt_json_count(last, "outputTokens"));
    add_count(&u->reasoning_tokens, bt_json_count(last, "reasoningOutputTokens"));
    u->context_tokens = bt_json_count(last, "totalTokens");
    u->context_window = bt_json_count(tu, "modelContextWindow");
    p->usage_seen = 1;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage = *u;
    emit(sink, &ev);
}

/* ---- errors and turn end -------------------------------------------- */

static void remember_error(struct codex_parser *p, const cJSON *err)
{
    const char *msg = err ? bt_json_str(err, "message") : NULL;
    free(p->error_message);
    p->error_kind =
        bt_codex_thread_gone(msg) ? BT_ERROR_KIND_RESUME_FAILED : bt_codex_error_kind(err);
    p->error_message = msg ? bt_xstrdup(msg) : NULL;
}

static void on_error_note(struct codex_parser *p, const cJSON *params,
                          const struct bt_parser_sink *sink)
{
    const cJSON *err = bt_json_obj(params, "error");
    const cJSON *retry = cJSON_GetObjectItemCaseSensitive(params, "willRetry");
    const char *msg = err ? bt_json_str(err, "message") : NULL;
    if (cJSON_IsTrue(retry)) {
        bt_parser_warn(sink, "retry", msg ? msg : "codex is retrying", NULL, 0);
        /* the reason: "Reconnecting... 1/5" says little without the details */
        const char *more = err ? bt_json_str(err, "additionalDetails") : NULL;
        char *why = msg && more ? bt_xasprintf("%s (%s)", msg, more) : NULL;
        struct bt_signal sig = {.type = BT_SIGNAL_RETRY,
                                .retry = {.error_kind = bt_codex_error_kind(err),
                                          .message = why   ? why
                                                     : msg ? msg
                                                           : more}};
        sink->signal(sink->data, &sig);
        free(why);
        return;
    }
    remember_error(p, err);
}

static enum bt_turn_status turn_status(const char *s, int *known)
{
    *known = 1;
    if (s && strcmp(s, "completed") == 0)
        return BT_TURN_COMPLETED;
    if (s && strcmp(s, "interrupted") == 0)
        return BT_TURN_CANCELLED;
    if (s && strcmp(s, "failed") == 0)
        return BT_TURN_FAILED;
    *known = 0;
    return BT_TURN_FAILED;
}

static void on_turn_completed(struct codex_parser *p, const cJSON *params,
                              const struct bt_parser_sink *sink)
{
    const cJSON *turn = bt_json_obj(params, "turn");
    const char *s = turn ? bt_json_str(turn, "status") : NULL;
    const char *id = turn ? bt_json_str(turn, "id") : NULL;
    if (p->turn_id && (!id || strcmp(id, p->turn_id) != 0)) {
        bt_parser_warn(sink, "protocol", "codex completed a turn that is not this one", NULL, 0);
        return;
    }
    if (!p->turn_id && id) {
        /* before turn/start was answered: not a turn this client started */
        bt_parser_warn(sink, "protocol", "codex completed a turn before starting one", NULL, 0);
        return;
    }
    int known;
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END};
    struct bt_signal_turn_end *end = &sig.turn_end;
    end->status = turn_status(s, &known);
    if (!known)
        bt_parser_warn(sink, "unknown_status", "unknown codex turn status", s, s ? strlen(s) : 0);
    const cJSON *err = turn ? bt_json_obj(turn, "error") : NULL;
    if (err)
        remember_error(p, err);
    if (end->status == BT_TURN_FAILED) {
        enum bt_error_kind kind =
            p->error_kind != BT_ERROR_KIND_NONE ? p->error_kind : BT_ERROR_KIND_MODEL_ERROR;
        end->error_kind = known ? kind : BT_ERROR_KIND_PROTOCOL_MISMATCH;
        end->message = known ? p->error_message : "codex ended the turn with an unknown status";
    }
    p->ended = 1;
    sink->signal(sink->data, &sig);
}

/* ---- dispatch ------------------------------------------------------- */

/* Notifications that make no event but show the turn moving on: a tool or
 * a patch under way, a diff or reasoning part that grew, a compaction done. */
static const char *const progress_methods[] = {
    "turn/diff/updated",
    "item/reasoning/summaryPartAdded",
    "item/fileChange/patchUpdated",
    "item/mcpToolCall/progress",
    "item/commandExecution/terminalInteraction",
    "thread/compacted",
};

/* Notifications that carry nothing for the event stream (and are not
 * progress for the idle watchdog: status changes, rate limits, hooks). */
static const char *const ignored_methods[] = {
    "thread/started",
    "thread/status/changed",
    "thread/readState/changed",
    "thread/name/updated",
    "thread/settings/updated",
    "thread/goal/updated",
    "thread/goal/cleared",
    "thread/prediction/updated",
    "thread/queue/changed",
    "serverRequest/resolved",
    "remoteControl/status/changed",
    "mcpServer/startupStatus/updated",
    "account/updated",
    "account/rateLimits/updated",
    "app/list/updated",
    "skills/changed",
    "hook/started",
    "hook/completed",
    "turn/moderationMetadata",
    "model/safetyBuffering/updated",
    "fs/changed",
    "model/rerouted",
    "model/verification",
    "thread/closed",
    "thread/project/updated",
    "project/changed",
};

static int in_list(const char *const *list, size_t n, const char *method)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], method) == 0)
            return 1;
    return 0;
}

static void on_plan(const struct codex_parser *p, const cJSON *params,
                    const struct bt_parser_sink *sink)
{
    static const char *const keys[] = {"plan", "explanation"};
    struct bt_buf text = BT_BUF_INIT;
    const cJSON *step;
    cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(params, "plan"))
    {
        const char *st = bt_json_str(step, "status");
        const char *s = bt_json_str(step, "step");
        bt_buf_addf(&text, "%s[%s] %s", text.len ? "\n" : "", st ? st : "?", s ? s : "");
    }
    char *detail = bt_parser_detail(params, keys, BT_ARRAY_SIZE(keys));
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
    const char *turn = bt_json_str(params, "turnId");
    char *id = bt_xasprintf("plan-%s", turn ? turn : "turn");
    ev.item.id = id;
    ev.item.kind = BT_ITEM_PLAN;
    ev.item.subagent = p->subagent;
    ev.item.status = "completed";
    ev.item.text = text.data;
    ev.item.text_len = text.len;
    ev.item.detail_json = detail;
    emit(sink, &ev);
    free(id);
    cJSON_free(detail);
    bt_buf_release(&text);
}

/* An item notification of the conversation's own thread for a turn that is
 * not this one (the thread's next turn, started by codex itself when a
 * sub-agent reports back): not this turn's work. */
static int other_turn(const struct codex_parser *p, const char *m, const cJSON *params)
{
    const char *turn = bt_json_str(params, "turnId");
    return !p->subagent && p->turn_id && turn && strcmp(turn, p->turn_id) != 0 &&
           strncmp(m, "item/", 5) == 0;
}

static int on_notification(struct codex_parser *p, const char *m, const cJSON *params,
                           const struct bt_parser_sink *sink, const char *raw, size_t raw_len)
{
    if (p->subagent && bt_codex_agents_note(p->agents, p->subagent, m, params, sink))
        return 0;
    if (other_turn(p, m, params))
        bt_parser_warn(sink, "protocol", "codex sent an item of another turn", raw, raw_len);
    else if (strcmp(m, "item/agentMessage/delta") == 0)
        on_delta(p, params, BT_ITEM_MESSAGE, sink);
    else if (strcmp(m, "item/reasoning/summaryTextDelta") == 0 ||
             strcmp(m, "item/reasoning/textDelta") == 0)
        on_delta(p, params, BT_ITEM_REASONING, sink);
    else if (strcmp(m, "item/commandExecution/outputDelta") == 0)
        on_delta(p, params, BT_ITEM_COMMAND, sink);
    else if (strcmp(m, "item/fileChange/outputDelta") == 0)
        on_delta(p, params, BT_ITEM_FILE_CHANGE, sink);
    else if (strcmp(m, "item/plan/delta") == 0)
        on_delta(p, params, BT_ITEM_PLAN, sink);
    else if (strcmp(m, "item/started") == 0)
        on_item(p, params, BT_EVENT_ITEM_STARTED, sink, raw, raw_len);
    else if (strcmp(m, "item/completed") == 0)
        on_item(p, params, BT_EVENT_ITEM_COMPLETED, sink, raw, raw_len);
    else if (strcmp(m, "thread/tokenUsage/updated") == 0)
        on_usage(p, params, sink);
    else if (strcmp(m, "turn/plan/updated") == 0)
        on_plan(p, params, sink);
    else if (strcmp(m, "error") == 0)
        on_error_note(p, params, sink);
    else if (strcmp(m, "turn/started") == 0) {
        if (!p->turn_id) /* turn/start's answer names it first; another is not ours */
            set_turn(p, bt_json_str(bt_json_obj(params, "turn"), "id"));
    } else if (strcmp(m, "turn/completed") == 0)
        on_turn_completed(p, params, sink);
    else if (strcmp(m, "configWarning") == 0 || strcmp(m, "warning") == 0 ||
             strcmp(m, "deprecationNotice") == 0 || strcmp(m, "guardianWarning") == 0) {
        const char *msg = params ? bt_json_str(params, "summary") : NULL;
        if (!msg && params)
            msg = bt_json_str(params, "message");
        bt_parser_warn(sink, "coder", msg ? msg : m, NULL, 0);
    } else if (in_list(progress_methods, BT_ARRAY_SIZE(progress_methods), m)) {
        struct bt_signal sig = {.type = BT_SIGNAL_PROGRESS};
        sink->signal(sink->data, &sig);
    } else if (!in_list(ignored_methods, BT_ARRAY_SIZE(ignored_methods), m))
        return BT_ENOTFOUND;
    return 0;
}

/* What a request is about, for approval events; NULL for non-approvals. */
static const char *approval_kind(const char *m)
{
    if (strcmp(m, "item/commandExecution/requestApproval") == 0 ||
        strcmp(m, "execCommandApproval") == 0)
        return "command";
    if (strcmp(m, "item/fileChange/requestApproval") == 0 || strcmp(m, "applyPatchApproval") == 0)
        return "file_change";
    if (strcmp(m, "item/permissions/requestApproval") == 0)
        return "permissions";
    if (strcmp(m, "mcpServer/elicitation/request") == 0 ||
        strcmp(m, "item/tool/requestUserInput") == 0)
        return "user_input";
    return NULL;
}

/* The questions of a user_input request, as text (owned, cJSON_free):
 * item/tool/requestUserInput's params.questions [{id, header, question,
 * options: [{label, description}]}]; mcpServer/elicitation/request's
 * form fields (parser-form.h), or its message headed by its serverName
 * (url mode; codex-cli 0.171.0 generate-json-schema). NULL when there are none. */
static char *questions_of(const char *m, const cJSON *params)
{
    cJSON *qs = NULL;
    if (strcmp(m, "item/tool/requestUserInput") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(params, "questions"), *q;
        if (!cJSON_IsArray(list))
            list = NULL;
        cJSON_ArrayForEach(q, list)
        {
            bt_parser_question(&qs, bt_json_str(q, "id"), bt_json_str(q, "header"),
                               bt_json_str(q, "question"),
                               cJSON_GetObjectItemCaseSensitive(q, "options"), 0);
        }
    } else if (strcmp(m, "mcpServer/elicitation/request") == 0 &&
               !bt_form_questions(&qs, bt_json_obj(params, "requestedSchema"),
                                  bt_json_str(params, "message"))) {
        /* url mode, or a form baton cannot fill: its message, to decline */
        bt_parser_question(&qs, NULL, bt_json_str(params, "serverName"),
                           bt_json_str(params, "message"), NULL, 0);
    }
    return bt_parser_changes_text(qs);
}

static void on_request(struct codex_parser *p, const cJSON *msg, const char *m, const cJSON *params,
                       const struct bt_parser_sink *sink)
{
    const cJSON *idv = cJSON_GetObjectItemCaseSensitive(msg, "id");
    char *id = cJSON_PrintUnformatted(idv);
    struct bt_signal sig = {.type = BT_SIGNAL_REQUEST, .request = {.request_id = id, .method = m}};
    struct bt_signal_request *rq = &sig.request;
    rq->approval_kind = approval_kind(m);
    rq->item_id = params ? bt_json_str(params, "itemId") : NULL;
    const char *summary = params ? bt_json_str(params, "command") : NULL;
    if (!summary && rq->item_id && p->item_id && strcmp(rq->item_id, p->item_id) == 0)
        summary = p->item_summary;
    if (!summary && params)
        summary = bt_json_str(params, "reason");
    if (!summary && params)
        summary = bt_json_str(params, "message");
    char *qj = params ? questions_of(m, params) : NULL;
    rq->questions_json = qj;
    cJSON *first = qj ? cJSON_Parse(qj) : NULL;
    if (!summary && first) /* a question: its first one */
        summary = bt_json_str(cJSON_GetArrayItem(first, 0), "text");
    rq->summary = summary ? summary : m;
    char *pj = NULL;
    if (params && strcmp(m, "item/permissions/requestApproval") == 0)
        rq->params_json = pj =
            cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(params, "permissions"));
    /* a form the questions stand for: its schema, for the answer (parser-form.h) */
    const cJSON *schema = params ? bt_json_obj(params, "requestedSchema") : NULL;
    if (strcmp(m, "mcpServer/elicitation/request") == 0 && bt_form_fillable(schema))
        rq->params_json = pj = cJSON_PrintUnformatted(schema);
    if (rq->approval_kind) {
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_APPROVAL_REQUESTED);
        ev.approval_kind = rq->approval_kind;
        ev.summary = rq->summary;
        ev.item.id = rq->item_id;
        ev.request_id = id;
        ev.questions_json = qj;
        emit(sink, &ev);
    }
    sink->signal(sink->data, &sig);
    cJSON_Delete(first);
    cJSON_free(qj);
    cJSON_free(pj);
    cJSON_free(id);
}

/* The initialize answer's userAgent is "<originator>/<codex version> (os;
 * arch) terminal (client; version)" (codex-cli 0.171.0): the version after
 * the first '/' is codex's own. */
static void signal_version(const char *user_agent, const struct bt_parser_sink *sink)
{
    const char *slash = user_agent ? strchr(user_agent, '/') : NULL;
    char *v = slash && isdigit((unsigned char)slash[1]) ? bt_find_version(slash + 1) : NULL;
    if (!v)
        return;
    struct bt_signal sig = {.type = BT_SIGNAL_CODER_VERSION, .coder_version = {.version = v}};
    sink->signal(sink->data, &sig);
    free(v);
}

static void on_response(struct codex_parser *p, const cJSON *msg, const struct bt_parser_sink *sink)
{
    const cJSON *idv = cJSON_GetObjectItemCaseSensitive(msg, "id");
    struct bt_signal sig = {.type = BT_SIGNAL_RESPONSE};
    struct bt_signal_response *rs = &sig.response;
    rs->id = bt_json_int_of(idv); /* BT_UNKNOWN (-1) for 2.5, "1", null: never ours */
    const cJSON *err = bt_json_obj(msg, "error");
    const cJSON *res = bt_json_obj(msg, "result");
    if (err) {
        rs->is_error = 1;
        rs->error_code = bt_json_int(err, "code");
        rs->error_message = bt_json_str(err, "message");
    } else if (res) {
        const cJSON *thread = bt_json_obj(res, "thread");
        const cJSON *turn = bt_json_obj(res, "turn");
        rs->session_id = thread ? bt_json_str(thread, "id") : NULL;
        if (rs->session_id && !p->thread_id)
            p->thread_id = bt_xstrdup(rs->session_id);
        rs->turn_id = turn ? bt_json_str(turn, "id") : NULL;
        set_turn(p, rs->turn_id);
    }
    sink->signal(sink->data, &sig);
    if (res)
        signal_version(bt_json_str(res, "userAgent"), sink);
}

static void codex_line(void *st, char *line, size_t len, const struct bt_parser_sink *sink)
{
    struct codex_parser *p = st;
    const char *start = bt_parser_json_start(line, len);
    if (!start) {
        if (len)
            bt_parser_warn(sink, "noise", "codex wrote a line that is not JSON", line, len);
        return;
    }
    cJSON *msg = bt_json_parse(start, len - (size_t)(start - line), NULL);
    if (!cJSON_IsObject(msg)) {
        bt_parser_warn(sink, "invalid_json", "codex wrote a line that is not valid JSON", line,
                       len);
        cJSON_Delete(msg);
        return;
    }
    const char *m = bt_json_str(msg, "method");
    const cJSON *params = bt_json_obj(msg, "params");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    if (m && !id)
        p->subagent = bt_codex_agents_thread_of(p->thread_id, params);
    if (m && id)
        on_request(p, msg, m, params, sink);
    else if (m && on_notification(p, m, params, sink, line, len) != 0)
        bt_parser_warn(sink, "unknown_method", "unknown codex notification", line, len);
    else if (!m && id)
        on_response(p, msg, sink);
    else if (!m)
        bt_parser_warn(sink, "protocol", "codex message with neither method nor id", line, len);
    p->subagent = NULL; /* it pointed into msg */
    cJSON_Delete(msg);
}

static void codex_diagnose(void *st, const char *tail, size_t tail_len, int64_t exit_code,
                           int signal, enum bt_error_kind *kind, struct bt_buf *msg)
{
    struct codex_parser *p = st;
    (void)tail_len;
    if (p->error_message) {
        *kind = p->error_kind;
        bt_buf_addf(msg, "codex reported an error: %s", p->error_message);
        return;
    }
    if (!signal && tail &&
        (strstr(tail, "401 Unauthorized") || strstr(tail, "not logged in") ||
         strstr(tail, "codex login") || strstr(tail, "OPENAI_API_KEY"))) {
        *kind = BT_ERROR_KIND_AUTH_REQUIRED;
        bt_buf_adds(msg, "codex is not logged in: run `codex login` or set an API key");
        return;
    }
    *kind = BT_ERROR_KIND_CODER_CRASHED;
    if (signal)
        bt_buf_addf(msg, "codex stopped unexpectedly (signal %d) before the turn ended", signal);
    else
        bt_buf_addf(msg, "codex exited (code %lld) before the turn ended", (long long)exit_code);
}

const struct bt_parser_ops bt_parser_codex = {
    .create = codex_create,
    .destroy = codex_destroy,
    .line = codex_line,
    .diagnose = codex_diagnose,
};
