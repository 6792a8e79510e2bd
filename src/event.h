/* SPDX-License-Identifier: MIT */
/*
 * event: baton's normalized event model (see docs/events.md and
 * docs/events.schema.json), and its JSON-lines encoding.
 *
 * A parser fills a struct bt_event with borrowed pointers (valid only for the
 * duration of the emit callback) and hands it to its sink; the turn engine
 * stamps the envelope (seq, run, conversation, ts) and encodes it with
 * bt_event_to_json. Fields that do not apply to a type are ignored by the
 * encoder; unknown numbers are BT_UNKNOWN (-1) and are encoded as null.
 */
#ifndef BT_EVENT_H
#define BT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define BT_UNKNOWN (-1)

#define BT_EVENT_TYPES(X)                                                                          \
    X(TURN_STARTED, "turn.started")                                                                \
    X(SESSION_STARTED, "session.started")                                                          \
    X(ITEM_STARTED, "item.started")                                                                \
    X(ITEM_DELTA, "item.delta")                                                                    \
    X(ITEM_COMPLETED, "item.completed")                                                            \
    X(APPROVAL_REQUESTED, "approval.requested")                                                    \
    X(APPROVAL_RESOLVED, "approval.resolved")                                                      \
    X(TURN_STEERED, "turn.steered")                                                                \
    X(USAGE, "usage")                                                                              \
    X(WARNING, "warning")                                                                          \
    X(ERROR, "error")                                                                              \
    X(TURN_COMPLETED, "turn.completed")

enum bt_event_type {
#define BT_EVENT_ENUM(name, str) BT_EVENT_##name,
    BT_EVENT_TYPES(BT_EVENT_ENUM)
#undef BT_EVENT_ENUM
        BT_EVENT__COUNT
};

#define BT_ITEM_KINDS(X)                                                                           \
    X(MESSAGE, "message")                                                                          \
    X(REASONING, "reasoning")                                                                      \
    X(COMMAND, "command")                                                                          \
    X(FILE_CHANGE, "file_change")                                                                  \
    X(TOOL_CALL, "tool_call")                                                                      \
    X(WEB_SEARCH, "web_search")                                                                    \
    X(PLAN, "plan")                                                                                \
    X(SUBAGENT, "subagent")                                                                        \
    X(OTHER, "other")

enum bt_item_kind {
#define BT_ITEM_ENUM(name, str) BT_ITEM_##name,
    BT_ITEM_KINDS(BT_ITEM_ENUM)
#undef BT_ITEM_ENUM
        BT_ITEM__COUNT
};

/* Final state of a turn. Anything a parser cannot map is FAILED, never
 * COMPLETED. */
enum bt_turn_status {
    BT_TURN_COMPLETED,
    BT_TURN_FAILED,
    BT_TURN_CANCELLED,
    BT_TURN_INTERRUPTED,
};

/* Token counts; each field BT_UNKNOWN when the coder did not say.
 * cost_usd < 0 means unknown. */
struct bt_usage {
    int64_t input_tokens;        /* prompt tokens of the last request */
    int64_t cached_input_tokens; /* part of input served from cache */
    int64_t output_tokens;       /* generated tokens */
    int64_t reasoning_tokens;    /* part of output spent reasoning */
    int64_t context_tokens;      /* tokens now in the context window */
    int64_t context_window;      /* model's context window size */
    double cost_usd;             /* reported cost, < 0 if unknown */
};

/* One item inside a turn. Strings are borrowed, NULL when absent. */
struct bt_item {
    const char *id;          /* coder's item id; never NULL in an item event */
    enum bt_item_kind kind;  /* what the item is */
    const char *status;      /* completed | failed | declined | in_progress */
    const char *text;        /* message/reasoning text; command output */
    size_t text_len;         /* bytes of text (text may hold any bytes) */
    const char *command;     /* command line, for BT_ITEM_COMMAND */
    const char *cwd;         /* working dir of a command */
    int64_t exit_code;       /* command exit code, BT_UNKNOWN if none */
    const char *name;        /* tool name, search query, file path(s) */
    const char *detail_json; /* optional JSON object text with extras; left
                                out of the JSON when it nests deeper than
                                BT_EVENT_DETAIL_DEPTH_MAX */
    /* file_change: the changes, normalized, as JSON array text (NULL:
     * the coder says none): [{path, kind (add | update | delete | write),
     * move_to?, diff? (unified hunks), old_text?, new_text?}] with what the
     * coder gave (docs/events.md) */
    const char *changes_json;
    /* the sub-agent this item belongs to, NULL for the turn's own agent:
     * codex the sub-agent's thread id (its notifications' threadId),
     * claude the id of the Task/Agent tool call that started it
     * (parent_tool_use_id). A BT_ITEM_SUBAGENT item has this same id as
     * its own id. Never part of the turn's answer (docs/events.md). */
    const char *subagent;
    /* message items: "commentary" (a preamble before tool calls) or
     * "final_answer", when the coder says (codex agentMessage `phase`,
     * codex-cli 0.171.0); NULL otherwise */
    const char *phase;
};

struct bt_event {
    enum bt_event_type type;

    /* Envelope, stamped by the turn engine. */
    int64_t seq;              /* per run, from 1 */
    const char *run;          /* run id */
    const char *conversation; /* conversation id */
    int64_t ts_ms;            /* ms since epoch, encoded RFC 3339 UTC */

    /* turn.started */
    const char *coder, *coder_version, *model, *cwd;
    /* turn.started, session.started */
    const char *native_session_id;   /* NULL encodes as null */
    const char *native_session_path; /* session.started: the session file, if any */
    int resumed;                     /* boolean */

    /* item.* */
    struct bt_item item;
    /* item.delta: the new text only */
    const char *delta;
    size_t delta_len;

    /* approval.*: kind (command, file_change, permissions, user_input,
     * other), one-line summary, decision (accept, decline), by (policy,
     * user, cancel) */
    const char *approval_kind, *summary, *decision, *by;
    const char *request_id; /* coder's request id as its JSON text (a parser's),
                               or as the event shows it (bt_event_request_id;
                               parsed back from JSON) */
    /* approval.requested of kind user_input: the questions, as JSON array
     * text [{text, header?, options?: [{label, description?}], multiple?,
     * id?}] (docs/events.md); NULL: none given */
    const char *questions_json;
    /* approval.resolved of a question a person answered (--approval ask):
     * the answers, JSON array text, one array of strings per question
     * (runners/runner.h, bt_runner_decision); NULL: none */
    const char *answers_json;

    /* turn.steered: the text a person put into the running turn, and the
     * control request that carried it (store.h controls; 0: none) */
    const char *steer_text;
    int64_t control;

    /* usage, and the turn totals in turn.completed */
    struct bt_usage usage;

    /* warning, error: kind (see docs/events.md) and message */
    const char *kind;
    const char *message;
    const char *raw; /* warning: offending raw line (may be cut) */
    size_t raw_len;

    /* turn.completed */
    enum bt_turn_status status;
    const char *final_text;
    int64_t duration_ms;
    int64_t exit_code;   /* coder's exit status, BT_UNKNOWN if killed */
    int64_t exit_signal; /* signal that ended it, 0 if none */
    /* what the turn changed in its git working tree, as JSON object text
     * {files: [{path, old_path?, status, binary?, added, removed}], added,
     * removed} (src/repo.h, docs/events.md); NULL: not known (not in a
     * git repository) */
    const char *changes_json;
};

/* Initialise every field to "absent" (NULL, BT_UNKNOWN). */
void bt_event_init(struct bt_event *ev, enum bt_event_type type);
void bt_usage_init(struct bt_usage *u);

const char *bt_event_type_name(enum bt_event_type t);
/* Parse a type name; returns -1 if unknown. */
int bt_event_type_parse(const char *name);
const char *bt_item_kind_name(enum bt_item_kind k);
const char *bt_turn_status_name(enum bt_turn_status s);

/* The request id an approval event shows, `request_id`: the coder's id
 * as JSON text without the quotes of a plain string ("\"toolu_1\"" ->
 * toolu_1, 7 -> 7): what `baton approve` and the API take to name a
 * request. Writes at most n bytes with the NUL to buf; returns buf. */
#define BT_EVENT_REQUEST_ID_MAX 260 /* bytes of a shown request id, NUL included */
const char *bt_event_request_id(const char *json_text, char *buf, size_t n);

/* How deep an item's detail (and every other member holding JSON text:
 * changes, questions, answers) may nest to be written; deeper, it is left
 * out. Its line (3 levels more) stays within what cJSON reads back
 * (CJSON_NESTING_LIMIT, 1000). */
#define BT_EVENT_DETAIL_DEPTH_MAX 512

/* Append ev as one JSON object followed by '\n'. Strings are escaped (invalid
 * UTF-8 becomes U+FFFD, U+2028/2029 escaped). */
void bt_event_to_json(const struct bt_event *ev, struct bt_buf *out);

/* --- reading events back (event-parse.c) ------------------------------ */

/* Owns what a parsed event's strings point into (opaque). */
struct bt_event_doc;

/* Parse one event as bt_event_to_json writes it (one JSON object; white
 * space and a trailing newline around it are allowed) from json[0..len),
 * which need not be NUL-terminated and is not referenced after the call.
 * Fills *ev with every field the encoder writes for the event's type, so
 * that bt_event_to_json gives back the same bytes (one exception: invalid
 * UTF-8 that the encoder wrote as the escape \ufffd reads back as U+FFFD,
 * which it writes raw), and sets *doc to the owner of ev's strings (free
 * with bt_event_doc_free; ev is dangling after).
 *
 * Members may be absent (the field keeps its bt_event_init value); unknown
 * members are ignored. null is NULL for strings and BT_UNKNOWN for numbers
 * (cost_usd: -1). item.text, the text of item.delta and the raw of a
 * warning or error keep NUL bytes (\u0000) with their real length; other
 * strings end at the first NUL. An unknown item kind is BT_ITEM_OTHER; an
 * unknown or missing turn.completed status is BT_TURN_FAILED.
 *
 * Returns 0; BT_EPROTO for an object whose "type" is a string this baton
 * does not know (a newer baton's event: a reader may skip it); -EINVAL for
 * anything else: not JSON, not an object, trailing bytes, no string "type",
 * an item event without an "item" object holding a string "id", a member
 * of the wrong JSON type, an integer member with a fraction or beyond int64
 * (from 2^53 on it must be plain digits: it is read from the text, exactly),
 * a cost_usd that is not finite, a "ts" other than
 * "YYYY-MM-DDTHH:MM:SS.mmmZ" from 1970 to 9999; -ENOMEM if cJSON cannot
 * allocate the detail text. On error *doc is NULL and *ev is as
 * bt_event_init(ev, BT_EVENT__COUNT) leaves it: it points at nothing. */
int bt_event_parse(const char *json, size_t len, struct bt_event *ev, struct bt_event_doc **doc);
/* Free a document and everything the event parsed with it points into. NULL
 * is a no-op. */
void bt_event_doc_free(struct bt_event_doc *doc);

#endif
