/* SPDX-License-Identifier: MIT */
/* parser-util: helpers shared by every coder's parser. */
#include "parser.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "json.h"

#define RAW_MAX 4096

void bt_parser_warn(const struct bt_parser_sink *sink, const char *kind, const char *message,
                    const char *raw, size_t raw_len)
{
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_WARNING);
    ev.kind = kind;
    ev.message = message;
    if (raw) {
        ev.raw = raw;
        ev.raw_len = bt_utf8_cut(raw, raw_len, RAW_MAX);
    }
    sink->event(sink->data, &ev);
}

const char *bt_parser_json_start(const char *line, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)line[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        size_t a = bt_ansi_len(line + i, len - i);
        if (!a)
            break;
        i += a;
    }
    return i < len && line[i] == '{' ? line + i : NULL;
}

cJSON *bt_parser_json_line(const char *line, size_t len, const char *who,
                           const struct bt_parser_sink *sink)
{
    char msg[128];
    const char *start = bt_parser_json_start(line, len);
    if (!start) {
        snprintf(msg, sizeof(msg), "%s wrote a line that is not JSON", who);
        if (len)
            bt_parser_warn(sink, "noise", msg, line, len);
        return NULL;
    }
    cJSON *j = bt_json_parse(start, len - (size_t)(start - line), NULL);
    if (cJSON_IsObject(j))
        return j;
    snprintf(msg, sizeof(msg), "%s wrote a line that is not valid JSON", who);
    bt_parser_warn(sink, "invalid_json", msg, line, len);
    cJSON_Delete(j);
    return NULL;
}

void bt_parser_approval(const struct bt_parser_sink *sink, const struct bt_signal_request *rq,
                        const char *decision, const char *by)
{
    struct bt_event ev;
    bt_event_init(&ev, decision ? BT_EVENT_APPROVAL_RESOLVED : BT_EVENT_APPROVAL_REQUESTED);
    ev.approval_kind = rq->approval_kind;
    ev.summary = rq->summary;
    ev.item.id = rq->item_id;
    ev.request_id = rq->request_id;
    if (decision) {
        ev.decision = decision;
        ev.by = by ? by : "policy";
    } else {
        ev.questions_json = rq->questions_json;
    }
    sink->event(sink->data, &ev);
}

void bt_parser_change(cJSON **changes, const char *path, const char *kind, const char *move_to,
                      const char *diff, const char *old_text, const char *new_text)
{
    if (!path)
        return; /* a change of no file says nothing an editor can show */
    if (!*changes)
        *changes = cJSON_CreateArray();
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "path", path);
    cJSON_AddStringToObject(c, "kind", kind);
    const char *const keys[] = {"move_to", "diff", "old_text", "new_text"};
    const char *const values[] = {move_to, diff, old_text, new_text};
    for (size_t i = 0; i < BT_ARRAY_SIZE(keys); i++)
        if (values[i])
            cJSON_AddStringToObject(c, keys[i], values[i]);
    cJSON_AddItemToArray(*changes, c);
}

char *bt_parser_changes_text(cJSON *changes)
{
    char *s = changes && changes->child ? cJSON_PrintUnformatted(changes) : NULL;
    cJSON_Delete(changes);
    return s;
}

/* One option {label, description?} from a coder's entry, or NULL. */
static cJSON *question_option(const cJSON *o)
{
    const char *label = cJSON_IsString(o) ? o->valuestring : bt_json_str(o, "label");
    if (!label)
        label = bt_json_str(o, "title");
    if (!label)
        return NULL;
    cJSON *opt = cJSON_CreateObject();
    cJSON_AddStringToObject(opt, "label", label);
    const char *d = cJSON_IsObject(o) ? bt_json_str(o, "description") : NULL;
    if (d)
        cJSON_AddStringToObject(opt, "description", d);
    return opt;
}

void bt_parser_question(cJSON **questions, const char *id, const char *header, const char *text,
                        const cJSON *options, int multiple)
{
    if (!text)
        return;
    if (!*questions)
        *questions = cJSON_CreateArray();
    cJSON *q = cJSON_CreateObject();
    if (id)
        cJSON_AddStringToObject(q, "id", id);
    if (header && *header)
        cJSON_AddStringToObject(q, "header", header);
    cJSON_AddStringToObject(q, "text", text);
    cJSON *opts = cJSON_AddArrayToObject(q, "options");
    const cJSON *list = cJSON_IsArray(options) ? options : NULL, *o;
    cJSON_ArrayForEach(o, list)
    {
        cJSON *opt = question_option(o);
        if (opt)
            cJSON_AddItemToArray(opts, opt);
    }
    if (multiple)
        cJSON_AddBoolToObject(q, "multiple", 1);
    cJSON_AddItemToArray(*questions, q);
}

char *bt_parser_detail(const cJSON *o, const char *const *keys, size_t n)
{
    cJSON *d = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
        if (v && !cJSON_IsNull(v))
            cJSON_AddItemToObject(d, keys[i], cJSON_Duplicate(v, 1));
    }
    char *s = d->child ? cJSON_PrintUnformatted(d) : NULL;
    cJSON_Delete(d);
    return s;
}
