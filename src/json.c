/* SPDX-License-Identifier: MIT */
/* json: typed reads of cJSON members (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "util.h"

/* The value of the 4 hex digits at p, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Rewrite each lone surrogate escape of t (n bytes) as \ufffd, in place
 * (same length). Returns how many. */
static size_t fix_surrogates(char *t, size_t n)
{
    size_t fixed = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (t[i] != '\\')
            continue;
        long v = t[i + 1] == 'u' && i + 5 < n ? hex4(t + i + 2) : -1;
        if (v < 0xD800 || v > 0xDFFF) {
            i++; /* the escaped character: "\\\\" is one backslash */
            continue;
        }
        long lo =
            v <= 0xDBFF && i + 11 < n && t[i + 6] == '\\' && t[i + 7] == 'u' ? hex4(t + i + 8) : -1;
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            i += 11; /* a pair */
            continue;
        }
        t[i + 2] = t[i + 3] = t[i + 4] = 'f';
        t[i + 5] = 'd';
        fixed++;
        i += 5;
    }
    return fixed;
}

cJSON *bt_json_parse(const char *text, size_t len, const char **end)
{
    const char *stop = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
    if (j || len == 0) {
        if (end)
            *end = stop;
        return j;
    }
    char *copy = bt_xmalloc(len); /* may hold NULs: not a string copy */
    memcpy(copy, text, len);
    if (fix_surrogates(copy, len))
        j = cJSON_ParseWithLengthOpts(copy, len, &stop, 0);
    if (end)
        *end = j && stop ? text + (stop - copy) : NULL;
    free(copy);
    return j;
}

int bt_json_has_nul(const char *text, size_t len)
{
    if (memchr(text, '\0', len))
        return 1;
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
            return 1;
        i++; /* the escaped character */
    }
    return 0;
}

size_t bt_json_nul_replace(char *text, size_t len)
{
    size_t n = 0;
    char *end = text + len;
    /* memchr: coders' lines run to megabytes and hold few backslashes */
    for (char *p = memchr(text, '\\', len); p && p + 1 < end;
         p = p + 2 < end ? memchr(p + 2, '\\', (size_t)(end - p - 2)) : NULL) {
        if (p[1] == 'u' && end - p >= 6 && memcmp(p + 2, "0000", 4) == 0) {
            memcpy(p + 2, "fffd", 4);
            n++;
        }
    }
    return n;
}

const char *bt_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *bt_json_obj(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsObject(v) ? v : NULL;
}

int64_t bt_json_int_of(const cJSON *v)
{
    if (!cJSON_IsNumber(v))
        return BT_UNKNOWN;
    double d = v->valuedouble;
    /* The NaN check is the negated range test: NaN compares false. */
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
        return BT_UNKNOWN;
    return (int64_t)d;
}

int64_t bt_json_int(const cJSON *o, const char *key)
{
    return bt_json_int_of(cJSON_GetObjectItemCaseSensitive(o, key));
}

int64_t bt_json_count(const cJSON *o, const char *key)
{
    int64_t n = bt_json_int(o, key);
    return n < 0 ? BT_UNKNOWN : n;
}

void bt_json_set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? bt_xstrdup(s) : NULL;
}

/* The message of an API error body: {"error":{"message"}}, {"error":
 * "…"} or {"message"}. */
static const char *body_message(const cJSON *body)
{
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(body, "error");
    if (cJSON_IsObject(err) && bt_json_str(err, "message"))
        return bt_json_str(err, "message");
    if (cJSON_IsString(err))
        return err->valuestring;
    return bt_json_str(body, "message");
}

char *bt_json_error_text(const char *text)
{
    const char *brace = text ? strchr(text, '{') : NULL;
    cJSON *body = brace ? cJSON_Parse(brace) : NULL;
    const char *m = cJSON_IsObject(body) ? body_message(body) : NULL;
    char *out = m ? bt_xasprintf("%.*s%s", (int)(brace - text), text, m) : NULL;
    cJSON_Delete(body);
    return out;
}
