/* SPDX-License-Identifier: MIT */
/*
 * jscan: an allocation-free reader over one JSON text, for the hot paths of
 * parsers whose coders repeat large objects on every line (pi 0.73.1 sends
 * the whole partial message twice in each message_update: 0.4 MB lines for
 * a 200 KB answer). It walks an object's members, skips values without
 * building them (strings are crossed with memchr), and decodes the few
 * strings a parser needs. It checks the structure it walks; on anything
 * malformed it returns -1 and the parser falls back to cJSON, which reports
 * the line properly.
 */
#ifndef BT_JSCAN_H
#define BT_JSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct bt_jscan {
    const char *p;   /* next byte to read */
    const char *end; /* one past the last byte */
};

void bt_jscan_init(struct bt_jscan *s, const char *text, size_t len);

/* Expect '{'. Returns 0, or -1. */
int bt_jscan_object(struct bt_jscan *s);

/* The next member of the object being walked: returns 1 with the raw key
 * (between its quotes, escapes not decoded) and s at the member's value; 0
 * at the closing '}' (consumed); -1 on malformed input. */
int bt_jscan_member(struct bt_jscan *s, const char **key, size_t *key_len);

/* Skip one value of any type (nested objects and arrays included). */
int bt_jscan_skip(struct bt_jscan *s);

/* Read a string value, decoding escapes (\uXXXX with surrogate pairs) and
 * appending UTF-8 to out. Returns 0, or -1 if the value is not a string. */
int bt_jscan_string(struct bt_jscan *s, struct bt_buf *out);

/* Read an integer value (no fraction or exponent) into *v. */
int bt_jscan_int(struct bt_jscan *s, int64_t *v);

/* 1 if the raw key equals name. */
int bt_jscan_key_is(const char *key, size_t key_len, const char *name);

#endif
