/* SPDX-License-Identifier: MIT */
/* json: typed reads of cJSON members, shared by the parsers and the CLI.
 *
 * Each returns what the member holds when it has the wanted type and
 * NULL or BT_UNKNOWN (-1) otherwise: a missing member, null and a member
 * of another type read the same. Strings point into the cJSON tree and
 * live as long as it. */
#ifndef BT_JSON_H
#define BT_JSON_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* Parse a coder's JSON text of len bytes (not NUL-terminated) as
 * cJSON_ParseWithLengthOpts does (*end, when given, set to where it
 * stopped, in text), except that a lone UTF-16 surrogate escape (\uD83D
 * without its pair), which JSON's grammar allows and Node's
 * JSON.stringify writes for a string cut between the two halves of a
 * character, reads as U+FFFD where cJSON refuses the whole text: what a
 * coder said is kept. (A client's text is refused instead: it can send
 * again.) NULL when the text is not JSON. */
cJSON *bt_json_parse(const char *text, size_t len, const char **end);

/* 1 if the JSON text holds a NUL character, raw or as the escape
 * \u0000: cJSON's strings end at it, so "a\u0000b" would read as "a". */
int bt_json_has_nul(const char *text, size_t len);

/* Rewrite each escape \u0000 in the JSON text (len bytes, writable) as
 * \ufffd in place, the same length: cJSON's strings end at a NUL, so a
 * coder's "a\u0000b" would read as "a" and the rest of its text would be
 * lost; it reads as "a\xEF\xBF\xBDb" (U+FFFD) instead, as raw NUL bytes
 * and invalid UTF-8 do (docs/events.md, invalid_text). An escaped
 * backslash before "u0000" ("\\u0000", the six characters themselves)
 * is left alone. Returns the number of escapes replaced. */
size_t bt_json_nul_replace(char *text, size_t len);

/* The string member key of o, or NULL. o may be NULL. */
const char *bt_json_str(const cJSON *o, const char *key);

/* The object member key of o, or NULL. */
const cJSON *bt_json_obj(const cJSON *o, const char *key);

/* v as an integer a double holds exactly (|n| <= 2^53), or BT_UNKNOWN:
 * 2.5, 1e300, "1" and null are not integers. -1 itself reads as
 * BT_UNKNOWN, which every caller treats alike. */
int64_t bt_json_int_of(const cJSON *v);

/* bt_json_int_of of the member key of o. */
int64_t bt_json_int(const cJSON *o, const char *key);

/* A count (tokens, bytes): a non-negative integer member, else
 * BT_UNKNOWN. */
int64_t bt_json_count(const cJSON *o, const char *key);

/* An error message with a model API's JSON error body in it (pi 1.6.0
 * "500: {\"message\":…}", opencode 1.18.33 "Internal error: {…}", gemini
 * 0.61.0 the body alone) said without the JSON: the text before the body
 * and the body's error.message (or its error string, or its message).
 * Returns an owned string, or NULL when text (may be NULL) holds no such
 * body: the text says it as it is. Trailing text after the body is
 * dropped. */
char *bt_json_error_text(const char *text);

/* Replace *dst (owned, may be NULL) by a copy of s (NULL clears it). */
void bt_json_set_str(char **dst, const char *s);

#endif
