/* SPDX-License-Identifier: MIT */
/*
 * event-parse: the reverse of bt_event_to_json. Reads one stored event (the
 * JSON object of docs/events.md, as the events table keeps it) back into a
 * struct bt_event, so that a reader of the store can hand it to
 * bt_render_event. The contract is bt_event_parse's comment in event.h.
 *
 * Shapes read, by type (the envelope type, seq, run, conversation, ts for
 * all; ts is "YYYY-MM-DDTHH:MM:SS.mmmZ" back to ts_ms):
 *   turn.started       coder coder_version model cwd native_session_id resumed
 *   session.started    native_session_id native_session_path resumed
 *   item.*             item {id kind status text command cwd exit_code name
 *                      detail changes}; item.delta: text -> delta
 *   approval.*         kind -> approval_kind, summary, item_id -> item.id,
 *                      decision, by, questions -> questions_json,
 *                      answers -> answers_json, request_id
 *   usage              the usage counts and cost_usd
 *   warning, error     kind message raw
 *   turn.completed     status, error_kind -> kind, error -> message,
 *                      final_text, usage {...}, duration_ms,
 *                      exit {code -> exit_code, signal -> exit_signal}
 * item.detail (and item.changes) comes back re-serialized unformatted: the
 * parsers wrote it with cJSON_PrintUnformatted, whose output cJSON parses
 * and prints back to the same bytes.
 *
 * Ownership: the cJSON tree, the detail text and any decoded copies belong
 * to a struct bt_event_doc; the event's strings point into it, never into
 * the input. cJSON trees do not leave this file.
 *
 * What cJSON cannot carry is read again from the input text by a small
 * scanner: cJSON ends its strings at the first NUL, so when the input holds
 * a \u0000 escape (or a raw NUL), the strings that may carry NUL (item.text,
 * item.delta's text, the raw of a warning or error) are decoded from the
 * text; and an integer of magnitude 2^53 or more, which cJSON's double
 * rounds, is read from its digits. cJSON has accepted the text by then, so
 * the scanner only has to find the member, not validate the document.
 */
#include "event.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* 2^53: integers from it on do not survive cJSON's double; they are read
 * again from the text (the encoder writes any int64, e.g. saturated token
 * sums). */
#define JSON_INT_EXACT 9007199254740992.0

struct bt_event_doc {
    cJSON *root;     /* the parsed object; most of the event's strings */
    char *detail;    /* item.detail_json, re-serialized (cJSON_free) */
    char *changes;   /* item.changes_json or turn.completed's, likewise */
    char *copies[3]; /* strings decoded with their NULs (free) */
    size_t ncopies;  /* used entries of copies */
};

struct ctx {
    const char *json, *end; /* the input text */
    int nul;                /* the input may hold NUL inside a string */
    struct bt_event_doc *doc;
};

/* --- the raw scanner: strings holding NUL, integers from 2^53 on -------- */

/* cJSON takes every byte up to the space as white space; so does this. */
static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= ' ')
        p++;
    return p;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
    unsigned v = 0;
    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void add_utf8(struct bt_buf *b, unsigned cp)
{
    if (cp < 0x80) {
        bt_buf_addc(b, (char)cp);
    } else if (cp < 0x800) {
        bt_buf_addc(b, (char)(0xC0 | (cp >> 6)));
        bt_buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        bt_buf_addc(b, (char)(0xE0 | (cp >> 12)));
        bt_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        bt_buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        bt_buf_addc(b, (char)(0xF0 | (cp >> 18)));
        bt_buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        bt_buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        bt_buf_addc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Decode the JSON string at p (its opening quote) into out, NULs included,
 * as cJSON does. Returns the byte after the closing quote, NULL if the text
 * is not a string. */
static const char *decode_string(const char *p, const char *end, struct bt_buf *out)
{
    p++;
    for (;;) {
        const char *run = p;
        while (p < end && *p != '"' && *p != '\\')
            p++;
        bt_buf_add(out, run, (size_t)(p - run));
        if (p >= end)
            return NULL;
        if (*p == '"')
            return p + 1;
        if (end - p < 2)
            return NULL;
        char c = p[1];
        p += 2;
        unsigned cp, lo;
        switch (c) {
        case 'b': bt_buf_addc(out, '\b'); break;
        case 'f': bt_buf_addc(out, '\f'); break;
        case 'n': bt_buf_addc(out, '\n'); break;
        case 'r': bt_buf_addc(out, '\r'); break;
        case 't': bt_buf_addc(out, '\t'); break;
        case '"':
        case '\\':
        case '/': bt_buf_addc(out, c); break;
        case 'u':
            if (hex4(p, end, &cp) != 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                return NULL;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) != 0 ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return NULL;
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            add_utf8(out, cp);
            break;
        default: return NULL;
        }
    }
}

/* Skip the string at p (its opening quote); NULL if it does not end. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') {
            if (++p == end)
                return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Skip the JSON value at p; NULL if it does not end. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p != '{' && *p != '[') {
        while (p < end && *p != ',' && *p != '}' && *p != ']' && (unsigned char)*p > ' ')
            p++;
        return p;
    }
    size_t depth = 0;
    while (p < end) {
        if (*p == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            continue;
        }
        if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0)
                return p + 1;
        }
        p++;
    }
    return NULL;
}

/* The value of the first member of the object at p whose key, cut at its
 * first NUL as cJSON cuts it, is key; NULL if there is none. */
static const char *find_member(const char *p, const char *end, const char *key)
{
    struct bt_buf k = BT_BUF_INIT;
    const char *found = NULL;
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return NULL;
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        bt_buf_reset(&k);
        if (!(p = decode_string(p, end, &k)))
            break;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            break;
        p = skip_ws(p + 1, end);
        if (strcmp(k.data, key) == 0) {
            found = p;
            break;
        }
        if (!(p = skip_value(p, end)))
            break;
        p = skip_ws(p, end);
        if (p >= end || *p != ',')
            break;
        p = skip_ws(p + 1, end);
    }
    bt_buf_release(&k);
    return found;
}

/* The value of member key (of the object member outer, unless NULL) of the
 * input's top-level object, in the input text; NULL if there is none. */
static const char *raw_member(const struct ctx *c, const char *outer, const char *key)
{
    const char *p = c->json;
    if (outer && !(p = find_member(p, c->end, outer)))
        return NULL;
    return find_member(p, c->end, key);
}

/* That member's string decoded again, NULs kept; the copy belongs to the
 * doc. */
static int raw_string(struct ctx *c, const char *outer, const char *key, const char **out,
                      size_t *len)
{
    const char *p = raw_member(c, outer, key);
    if (!p || *p != '"' || c->doc->ncopies >= BT_ARRAY_SIZE(c->doc->copies))
        return -EINVAL;
    struct bt_buf b = BT_BUF_INIT;
    if (!decode_string(p, c->end, &b)) {
        bt_buf_release(&b);
        return -EINVAL;
    }
    char *s = bt_buf_detach(&b, len);
    c->doc->copies[c->doc->ncopies++] = s;
    *out = s;
    return 0;
}

/* That member's number read again as an int64: plain digits with an
 * optional minus, no fraction or exponent, in range. */
static int raw_int(const struct ctx *c, const char *outer, const char *key, int64_t *out)
{
    const char *p = raw_member(c, outer, key);
    if (!p)
        return -EINVAL;
    int neg = p < c->end && *p == '-';
    p += neg;
    /* the magnitude, as a negative number: INT64_MIN has no positive twin */
    int64_t v = 0;
    const char *first = p;
    for (; p < c->end && *p >= '0' && *p <= '9'; p++) {
        int digit = *p - '0';
        if (v < (INT64_MIN + digit) / 10)
            return -EINVAL;
        v = v * 10 - digit;
    }
    if (p == first || (p < c->end && (*p == '.' || *p == 'e' || *p == 'E')))
        return -EINVAL;
    if (!neg && v == INT64_MIN)
        return -EINVAL;
    *out = neg ? v : -v;
    return 0;
}

/* Whether a string of json[0..len) may decode to text holding NUL. A \\
 * before u0000 gives a false positive, which only costs the slow path. */
static int may_hold_nul(const char *json, size_t len)
{
    if (memchr(json, '\0', len))
        return 1;
    const char *end = json + len;
    for (const char *p = json; (p = memchr(p, '\\', (size_t)(end - p))) != NULL; p++)
        if (end - p >= 6 && memcmp(p, "\\u0000", 6) == 0)
            return 1;
    return 0;
}

/* --- members ------------------------------------------------------------ */

/* Each getter leaves *out alone when the member is absent and returns
 * -EINVAL when it has the wrong JSON type. */

static int get_str(const cJSON *o, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (cJSON_IsNull(v))
        *out = NULL;
    else if (cJSON_IsString(v) && v->valuestring)
        *out = v->valuestring;
    else
        return -EINVAL;
    return 0;
}

/* A string that may hold NUL: member key of o, which is the top-level
 * object's member outer (NULL: o is the top-level object). */
static int get_strn(struct ctx *c, const cJSON *o, const char *outer, const char *key,
                    const char **out, size_t *len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (cJSON_IsNull(v)) {
        *out = NULL;
        *len = 0;
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return -EINVAL;
    if (c->nul)
        return raw_string(c, outer, key, out, len);
    *out = v->valuestring;
    *len = strlen(v->valuestring);
    return 0;
}

/* An integer member key of o, which is the top-level object's member outer
 * (NULL: o is the top-level object). */
static int get_int(const struct ctx *c, const cJSON *o, const char *outer, const char *key,
                   int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (cJSON_IsNull(v)) {
        *out = BT_UNKNOWN;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return -EINVAL;
    double d = v->valuedouble;
    if (d > -JSON_INT_EXACT && d < JSON_INT_EXACT) {
        if ((double)(int64_t)d != d)
            return -EINVAL;
        *out = (int64_t)d;
        return 0;
    }
    if (!(d > -1e19 && d < 1e19)) /* beyond int64 (or not finite) */
        return -EINVAL;
    return raw_int(c, outer, key, out);
}

static int get_bool(const cJSON *o, const char *key, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return -EINVAL;
    *out = cJSON_IsTrue(v);
    return 0;
}

/* An object member; null and absent give NULL. */
static int get_obj(const cJSON *o, const char *key, const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsObject(v))
        return -EINVAL;
    *out = v;
    return 0;
}

/* o's member key, of the kind is() takes (an array, an object), or
 * absent, re-serialized into *text. */
static int get_json_text(const cJSON *o, const char *key, cJSON_bool (*is)(const cJSON *),
                         char **text, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!is(v))
        return -EINVAL;
    *text = cJSON_PrintUnformatted(v);
    if (!*text)
        return -ENOMEM;
    *out = *text;
    return 0;
}

/* The usage counts of o, which is the top-level object's member outer (NULL:
 * o is the top-level object). */
static int get_usage(const struct ctx *c, const cJSON *o, const char *outer, struct bt_usage *u)
{
    int rc = 0;
    rc |= get_int(c, o, outer, "input_tokens", &u->input_tokens);
    rc |= get_int(c, o, outer, "cached_input_tokens", &u->cached_input_tokens);
    rc |= get_int(c, o, outer, "output_tokens", &u->output_tokens);
    rc |= get_int(c, o, outer, "reasoning_tokens", &u->reasoning_tokens);
    rc |= get_int(c, o, outer, "context_tokens", &u->context_tokens);
    rc |= get_int(c, o, outer, "context_window", &u->context_window);
    if (rc)
        return -EINVAL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "cost_usd");
    if (!v)
        return 0;
    if (cJSON_IsNull(v))
        u->cost_usd = -1.0;
    else if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        u->cost_usd = v->valuedouble;
    else
        return -EINVAL;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian, y >= 1970). */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = y / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ", exactly as bt_time_rfc3339 writes it. */
static int parse_ts(const char *s, int64_t *out)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (strlen(s) != sizeof(shape) - 1)
        return -EINVAL;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
            return -EINVAL;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    int h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
        sec > 59)
        return -EINVAL;
    int64_t secs = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + sec;
    *out = secs * 1000 + digits(s + 20, 3);
    return 0;
}

/* --- events ------------------------------------------------------------- */

static int parse_item(struct ctx *c, const cJSON *j, struct bt_event *ev)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, "item");
    struct bt_item *item = &ev->item;
    if (!cJSON_IsObject(it))
        return -EINVAL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
    if (!cJSON_IsString(id) || !id->valuestring)
        return -EINVAL;
    item->id = id->valuestring;
    const char *kind = NULL;
    int rc = 0;
    rc |= get_str(it, "kind", &kind);
    item->kind = BT_ITEM_OTHER;
    for (int k = 0; kind && k < BT_ITEM__COUNT; k++)
        if (strcmp(kind, bt_item_kind_name((enum bt_item_kind)k)) == 0)
            item->kind = (enum bt_item_kind)k;
    rc |= get_str(it, "status", &item->status);
    rc |= get_strn(c, it, "item", "text", &item->text, &item->text_len);
    rc |= get_str(it, "command", &item->command);
    rc |= get_str(it, "cwd", &item->cwd);
    rc |= get_int(c, it, "item", "exit_code", &item->exit_code);
    rc |= get_str(it, "name", &item->name);
    rc |= get_str(it, "subagent", &item->subagent);
    rc |= get_str(it, "phase", &item->phase);
    const cJSON *detail;
    rc |= get_obj(it, "detail", &detail);
    if (rc)
        return -EINVAL;
    if (detail) {
        c->doc->detail = cJSON_PrintUnformatted(detail);
        if (!c->doc->detail)
            return -ENOMEM;
        item->detail_json = c->doc->detail;
    }
    rc = get_json_text(it, "changes", cJSON_IsArray, &c->doc->changes, &item->changes_json);
    if (rc)
        return rc;
    if (ev->type == BT_EVENT_ITEM_DELTA)
        return get_strn(c, j, NULL, "text", &ev->delta, &ev->delta_len);
    return 0;
}

static int parse_completed(const struct ctx *c, const cJSON *j, struct bt_event *ev)
{
    static const enum bt_turn_status all[] = {BT_TURN_COMPLETED, BT_TURN_FAILED, BT_TURN_CANCELLED,
                                              BT_TURN_INTERRUPTED};
    const char *status = NULL;
    const cJSON *usage, *ex;
    int rc = 0;
    rc |= get_str(j, "status", &status);
    ev->status = BT_TURN_FAILED;
    for (size_t i = 0; status && i < BT_ARRAY_SIZE(all); i++)
        if (strcmp(status, bt_turn_status_name(all[i])) == 0)
            ev->status = all[i];
    rc |= get_str(j, "error_kind", &ev->kind);
    rc |= get_str(j, "error", &ev->message);
    rc |= get_str(j, "final_text", &ev->final_text);
    rc |= get_obj(j, "usage", &usage);
    if (usage)
        rc |= get_usage(c, usage, "usage", &ev->usage);
    rc |= get_int(c, j, NULL, "duration_ms", &ev->duration_ms);
    rc |= get_obj(j, "exit", &ex);
    if (ex) {
        rc |= get_int(c, ex, "exit", "code", &ev->exit_code);
        rc |= get_int(c, ex, "exit", "signal", &ev->exit_signal);
    }
    if (rc == 0)
        rc = get_json_text(j, "changes", cJSON_IsObject, &c->doc->changes, &ev->changes_json);
    return rc ? -EINVAL : 0;
}

static int parse_payload(struct ctx *c, const cJSON *j, struct bt_event *ev)
{
    int rc = 0;
    switch (ev->type) {
    case BT_EVENT_TURN_STARTED:
        rc |= get_str(j, "coder", &ev->coder);
        rc |= get_str(j, "coder_version", &ev->coder_version);
        rc |= get_str(j, "model", &ev->model);
        rc |= get_str(j, "cwd", &ev->cwd);
        rc |= get_str(j, "native_session_id", &ev->native_session_id);
        rc |= get_bool(j, "resumed", &ev->resumed);
        break;
    case BT_EVENT_SESSION_STARTED:
        rc |= get_str(j, "native_session_id", &ev->native_session_id);
        rc |= get_str(j, "native_session_path", &ev->native_session_path);
        rc |= get_bool(j, "resumed", &ev->resumed);
        break;
    case BT_EVENT_ITEM_STARTED:
    case BT_EVENT_ITEM_DELTA:
    case BT_EVENT_ITEM_COMPLETED: return parse_item(c, j, ev);
    case BT_EVENT_APPROVAL_REQUESTED:
    case BT_EVENT_APPROVAL_RESOLVED:
        rc |= get_str(j, "request_id", &ev->request_id);
        rc |= get_str(j, "kind", &ev->approval_kind);
        rc |= get_str(j, "summary", &ev->summary);
        rc |= get_str(j, "item_id", &ev->item.id);
        rc |= get_str(j, "decision", &ev->decision);
        rc |= get_str(j, "by", &ev->by);
        /* approvals have no changes: its slot holds the questions of a
         * request, the answers of a resolution */
        if (rc == 0 && ev->type == BT_EVENT_APPROVAL_REQUESTED)
            rc =
                get_json_text(j, "questions", cJSON_IsArray, &c->doc->changes, &ev->questions_json);
        else if (rc == 0)
            rc = get_json_text(j, "answers", cJSON_IsArray, &c->doc->changes, &ev->answers_json);
        break;
    case BT_EVENT_TURN_STEERED:
        rc |= get_str(j, "text", &ev->steer_text);
        rc |= get_int(c, j, NULL, "control", &ev->control);
        break;
    case BT_EVENT_USAGE: rc |= get_usage(c, j, NULL, &ev->usage); break;
    case BT_EVENT_WARNING:
    case BT_EVENT_ERROR:
        rc |= get_str(j, "kind", &ev->kind);
        rc |= get_str(j, "message", &ev->message);
        rc |= get_strn(c, j, NULL, "raw", &ev->raw, &ev->raw_len);
        break;
    case BT_EVENT_TURN_COMPLETED: return parse_completed(c, j, ev);
    case BT_EVENT__COUNT: break;
    }
    return rc ? -EINVAL : 0;
}

static int parse_envelope(const struct ctx *c, const cJSON *j, struct bt_event *ev)
{
    int rc = 0;
    rc |= get_int(c, j, NULL, "seq", &ev->seq);
    rc |= get_str(j, "run", &ev->run);
    rc |= get_str(j, "conversation", &ev->conversation);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "ts");
    if (ts &&
        !(cJSON_IsString(ts) && ts->valuestring && parse_ts(ts->valuestring, &ev->ts_ms) == 0))
        rc = -EINVAL;
    return rc ? -EINVAL : 0;
}

void bt_event_doc_free(struct bt_event_doc *doc)
{
    if (!doc)
        return;
    cJSON_Delete(doc->root);
    cJSON_free(doc->detail);
    cJSON_free(doc->changes);
    for (size_t i = 0; i < doc->ncopies; i++)
        free(doc->copies[i]);
    free(doc);
}

static int parse(struct ctx *c, size_t len, struct bt_event *ev)
{
    const char *stop = NULL;
    cJSON *j = c->doc->root = cJSON_ParseWithLengthOpts(c->json, len, &stop, 0);
    if (!j || !cJSON_IsObject(j))
        return -EINVAL;
    while (stop < c->end && (*stop == ' ' || *stop == '\t' || *stop == '\r' || *stop == '\n'))
        stop++;
    if (stop != c->end)
        return -EINVAL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
    if (!cJSON_IsString(type) || !type->valuestring)
        return -EINVAL;
    int t = bt_event_type_parse(type->valuestring);
    if (t < 0)
        return BT_EPROTO;
    bt_event_init(ev, (enum bt_event_type)t);
    int rc = parse_envelope(c, j, ev);
    return rc ? rc : parse_payload(c, j, ev);
}

int bt_event_parse(const char *json, size_t len, struct bt_event *ev, struct bt_event_doc **doc)
{
    *doc = NULL;
    bt_event_init(ev, BT_EVENT__COUNT);
    if (!json || !len)
        return -EINVAL;
    struct ctx c = {
        .json = json,
        .end = json + len,
        .nul = may_hold_nul(json, len),
        .doc = bt_xcalloc(1, sizeof(struct bt_event_doc)),
    };
    int rc = parse(&c, len, ev);
    if (rc != 0) {
        bt_event_doc_free(c.doc);
        bt_event_init(ev, BT_EVENT__COUNT);
        return rc;
    }
    *doc = c.doc;
    return 0;
}
