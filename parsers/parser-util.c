/* SPDX-License-Identifier: MIT */
/* parser-util: helpers shared by every coder's parser. */
#include "parser.h"

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
