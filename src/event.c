/* SPDX-License-Identifier: MIT */
/* event: names of the normalized event model and its JSON-lines encoding. */
#include "event.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
#define BT_EVENT_NAME(name, str) str,
    BT_EVENT_TYPES(BT_EVENT_NAME)
#undef BT_EVENT_NAME
};

static const char *const kind_names[] = {
#define BT_ITEM_NAME(name, str) str,
    BT_ITEM_KINDS(BT_ITEM_NAME)
#undef BT_ITEM_NAME
};

void bt_usage_init(struct bt_usage *u)
{
    u->input_tokens = u->cached_input_tokens = u->output_tokens = BT_UNKNOWN;
    u->reasoning_tokens = u->context_tokens = u->context_window = BT_UNKNOWN;
    u->cost_usd = -1.0;
}

void bt_event_init(struct bt_event *ev, enum bt_event_type type)
{
    memset(ev, 0, sizeof(*ev));
    ev->type = type;
    ev->item.exit_code = BT_UNKNOWN;
    ev->exit_code = BT_UNKNOWN;
    bt_usage_init(&ev->usage);
}

const char *bt_event_type_name(enum bt_event_type t)
{
    return (unsigned)t < BT_EVENT__COUNT ? type_names[t] : "unknown";
}

int bt_event_type_parse(const char *name)
{
    for (size_t i = 0; i < BT_EVENT__COUNT; i++)
        if (strcmp(type_names[i], name) == 0)
            return (int)i;
    return -1;
}

const char *bt_item_kind_name(enum bt_item_kind k)
{
    return (unsigned)k < BT_ITEM__COUNT ? kind_names[k] : "other";
}

const char *bt_turn_status_name(enum bt_turn_status s)
{
    switch (s) {
    case BT_TURN_COMPLETED: return "completed";
    case BT_TURN_CANCELLED: return "cancelled";
    case BT_TURN_INTERRUPTED: return "interrupted";
    case BT_TURN_FAILED: break;
    }
    return "failed";
}

/* Writers for one "key":value member; each adds the leading comma. */
static void put_key(struct bt_buf *b, const char *key)
{
    bt_buf_addc(b, ',');
    bt_json_quote(b, key, strlen(key));
    bt_buf_addc(b, ':');
}

static void put_str(struct bt_buf *b, const char *key, const char *v)
{
    put_key(b, key);
    if (v)
        bt_json_quote(b, v, strlen(v));
    else
        bt_buf_adds(b, "null");
}

const char *bt_event_request_id(const char *text, char *buf, size_t n)
{
    size_t len = strlen(text);
    /* a plain string (no escapes) loses its quotes; anything else is kept */
    if (len >= 2 && text[0] == '"' && text[len - 1] == '"' && !memchr(text, '\\', len)) {
        text++;
        len -= 2;
    }
    /* shown as valid UTF-8 cut on a character boundary: what is shown
     * once must read back the same (invalid bytes would become U+FFFD,
     * three bytes each, and cut elsewhere the next time) */
    char *clean = bt_utf8_sanitize(text, len, NULL);
    len = bt_utf8_cut(clean, strlen(clean), n - 1);
    memcpy(buf, clean, len);
    buf[len] = '\0';
    free(clean);
    return buf;
}

static void put_strn(struct bt_buf *b, const char *key, const char *v, size_t n)
{
    put_key(b, key);
    if (v)
        bt_json_quote(b, v, n);
    else
        bt_buf_adds(b, "null");
}

static void put_int(struct bt_buf *b, const char *key, int64_t v)
{
    put_key(b, key);
    if (v == BT_UNKNOWN)
        bt_buf_adds(b, "null");
    else
        bt_buf_addf(b, "%lld", (long long)v);
}

static void put_bool(struct bt_buf *b, const char *key, int v)
{
    put_key(b, key);
    bt_buf_adds(b, v ? "true" : "false");
}

static void put_usage(struct bt_buf *b, const struct bt_usage *u)
{
    put_int(b, "input_tokens", u->input_tokens);
    put_int(b, "cached_input_tokens", u->cached_input_tokens);
    put_int(b, "output_tokens", u->output_tokens);
    put_int(b, "reasoning_tokens", u->reasoning_tokens);
    put_int(b, "context_tokens", u->context_tokens);
    put_int(b, "context_window", u->context_window);
    put_key(b, "cost_usd");
    if (!(u->cost_usd >= 0) || !isfinite(u->cost_usd)) /* JSON has no NaN or inf */
        bt_buf_adds(b, "null");
    else
        bt_buf_addf(b, "%.6f", u->cost_usd);
}

/* {usage members}: put_usage writes each member with a leading comma, so
 * the first one is removed. */
static void put_nested(struct bt_buf *b, const struct bt_usage *u)
{
    bt_buf_addc(b, '{');
    size_t at = b->len;
    put_usage(b, u);
    memmove(b->data + at, b->data + at + 1, b->len - at); /* moves the NUL too */
    b->len--;
    bt_buf_addc(b, '}');
}

/* 1 if JSON text nests at most BT_EVENT_DETAIL_DEPTH_MAX deep; every
 * member holding JSON text is left out past it. A coder's extras (a
 * tool's input nested 999 deep, which cJSON still reads) inside
 * an event line would pass what cJSON reads back (1000 levels), and the
 * line could not be read: by bt_event_parse for `baton run`'s own output
 * and `baton acp`, by attach, show and the API. */
static int readable_depth(const char *json)
{
    int depth = 0, in_str = 0;
    for (const char *p = json; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{' || *p == '[') {
            if (++depth > BT_EVENT_DETAIL_DEPTH_MAX)
                return 0;
        } else if (*p == '}' || *p == ']') {
            depth--;
        }
    }
    return 1;
}

static void put_item(struct bt_buf *b, const struct bt_item *it, int full)
{
    put_key(b, "item");
    bt_buf_addc(b, '{');
    bt_buf_adds(b, "\"id\":");
    bt_json_quote(b, it->id ? it->id : "", it->id ? strlen(it->id) : 0);
    put_str(b, "kind", bt_item_kind_name(it->kind));
    if (it->subagent) /* on deltas too: a reader keeps a sub-agent's text apart */
        put_str(b, "subagent", it->subagent);
    if (!full)
        goto out;
    if (it->status)
        put_str(b, "status", it->status);
    if (it->text)
        put_strn(b, "text", it->text, it->text_len);
    if (it->command)
        put_str(b, "command", it->command);
    if (it->cwd)
        put_str(b, "cwd", it->cwd);
    if (it->kind == BT_ITEM_COMMAND && it->exit_code != BT_UNKNOWN)
        put_int(b, "exit_code", it->exit_code);
    if (it->name)
        put_str(b, "name", it->name);
    if (it->phase)
        put_str(b, "phase", it->phase);
    if (it->detail_json && it->detail_json[0] == '{' && readable_depth(it->detail_json)) {
        put_key(b, "detail");
        bt_buf_adds(b, it->detail_json);
    }
    if (it->changes_json && it->changes_json[0] == '[' && readable_depth(it->changes_json)) {
        put_key(b, "changes");
        bt_buf_adds(b, it->changes_json);
    }
out:
    bt_buf_addc(b, '}');
}

/* JSON text made by a parser (cJSON), copied with U+2028 and U+2029
 * escaped as every other string of an event is (cJSON writes them raw;
 * in JSON text they can only be inside a string). */
static void put_json_text(struct bt_buf *b, const char *json)
{
    for (const char *p = json, *ls; *p; p = ls + 3) {
        ls = strstr(p, "\xe2\x80");
        while (ls && ls[2] != '\xa8' && ls[2] != '\xa9')
            ls = strstr(ls + 2, "\xe2\x80");
        if (!ls) {
            bt_buf_adds(b, p);
            return;
        }
        bt_buf_add(b, p, (size_t)(ls - p));
        bt_buf_adds(b, ls[2] == '\xa8' ? "\\u2028" : "\\u2029");
    }
}

static void put_payload(struct bt_buf *b, const struct bt_event *ev)
{
    switch (ev->type) {
    case BT_EVENT_TURN_STARTED:
        put_str(b, "coder", ev->coder);
        put_str(b, "coder_version", ev->coder_version);
        put_str(b, "model", ev->model);
        put_str(b, "cwd", ev->cwd);
        put_str(b, "native_session_id", ev->native_session_id);
        put_bool(b, "resumed", ev->resumed);
        break;
    case BT_EVENT_SESSION_STARTED:
        put_str(b, "native_session_id", ev->native_session_id);
        if (ev->native_session_path)
            put_str(b, "native_session_path", ev->native_session_path);
        put_bool(b, "resumed", ev->resumed);
        break;
    case BT_EVENT_ITEM_STARTED:
    case BT_EVENT_ITEM_COMPLETED: put_item(b, &ev->item, 1); break;
    case BT_EVENT_ITEM_DELTA:
        put_item(b, &ev->item, 0);
        put_strn(b, "text", ev->delta ? ev->delta : "", ev->delta ? ev->delta_len : 0);
        break;
    case BT_EVENT_APPROVAL_REQUESTED:
    case BT_EVENT_APPROVAL_RESOLVED:
        if (ev->request_id) {
            char id[BT_EVENT_REQUEST_ID_MAX];
            put_str(b, "request_id", bt_event_request_id(ev->request_id, id, sizeof(id)));
        }
        put_str(b, "kind", ev->approval_kind ? ev->approval_kind : "other");
        put_str(b, "summary", ev->summary);
        if (ev->item.id)
            put_str(b, "item_id", ev->item.id);
        if (ev->type == BT_EVENT_APPROVAL_REQUESTED && ev->questions_json &&
            ev->questions_json[0] == '[' && readable_depth(ev->questions_json)) {
            put_key(b, "questions");
            put_json_text(b, ev->questions_json);
        }
        if (ev->type == BT_EVENT_APPROVAL_RESOLVED) {
            put_str(b, "decision", ev->decision);
            put_str(b, "by", ev->by);
            if (ev->answers_json && ev->answers_json[0] == '[' &&
                readable_depth(ev->answers_json)) {
                put_key(b, "answers");
                put_json_text(b, ev->answers_json);
            }
        }
        break;
    case BT_EVENT_TURN_STEERED:
        put_str(b, "text", ev->steer_text ? ev->steer_text : "");
        if (ev->control > 0)
            put_int(b, "control", ev->control);
        break;
    case BT_EVENT_USAGE: put_usage(b, &ev->usage); break;
    case BT_EVENT_WARNING:
    case BT_EVENT_ERROR:
        put_str(b, "kind", ev->kind ? ev->kind : "other");
        put_str(b, "message", ev->message ? ev->message : "");
        if (ev->raw)
            put_strn(b, "raw", ev->raw, ev->raw_len);
        break;
    case BT_EVENT_TURN_COMPLETED:
        put_str(b, "status", bt_turn_status_name(ev->status));
        if (ev->kind)
            put_str(b, "error_kind", ev->kind);
        if (ev->message)
            put_str(b, "error", ev->message);
        put_str(b, "final_text", ev->final_text ? ev->final_text : "");
        put_key(b, "usage");
        put_nested(b, &ev->usage);
        put_int(b, "duration_ms", ev->duration_ms);
        put_key(b, "exit");
        bt_buf_addc(b, '{');
        bt_buf_adds(b, "\"code\":");
        if (ev->exit_code == BT_UNKNOWN)
            bt_buf_adds(b, "null");
        else
            bt_buf_addf(b, "%lld", (long long)ev->exit_code);
        put_int(b, "signal", ev->exit_signal);
        bt_buf_addc(b, '}');
        if (ev->changes_json && ev->changes_json[0] == '{' && readable_depth(ev->changes_json)) {
            put_key(b, "changes");
            bt_buf_adds(b, ev->changes_json);
        }
        break;
    case BT_EVENT__COUNT: break;
    }
}

void bt_event_to_json(const struct bt_event *ev, struct bt_buf *out)
{
    char ts[32];
    bt_time_rfc3339(ev->ts_ms, ts);
    bt_buf_adds(out, "{\"type\":");
    const char *t = bt_event_type_name(ev->type);
    bt_json_quote(out, t, strlen(t));
    put_int(out, "seq", ev->seq);
    put_str(out, "run", ev->run);
    put_str(out, "conversation", ev->conversation);
    put_str(out, "ts", ts);
    put_payload(out, ev);
    bt_buf_adds(out, "}\n");
}
