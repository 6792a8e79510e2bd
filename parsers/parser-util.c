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

/* Length of an ANSI escape sequence at s, 0 if none. */
static size_t ansi_len(const char *s, size_t n)
{
    if (n < 2 || s[0] != '\x1b')
        return 0;
    size_t i = 2;
    if (s[1] == '[') { /* CSI: parameters, then a final byte 0x40-0x7e */
        while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x40)
            i++;
        return i < n ? i + 1 : n;
    }
    if (s[1] == ']') { /* OSC: until BEL or ESC \ */
        while (i < n && s[i] != '\a' && !(s[i] == '\x1b' && i + 1 < n && s[i + 1] == '\\'))
            i++;
        return i < n ? (s[i] == '\a' ? i + 1 : i + 2) : n;
    }
    return 2;
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
        size_t a = ansi_len(line + i, len - i);
        if (!a)
            break;
        i += a;
    }
    return i < len && line[i] == '{' ? line + i : NULL;
}
